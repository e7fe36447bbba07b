// Package web is faultline serve: a local web application over the store.
// Pages are rendered on the server with html/template; htmx, embedded with
// every other asset, swaps parts of them (more steps of a long trace, the
// labelling panel), so that the application works offline and with no
// script but its own. Everything a trace carries is escaped by
// html/template: traces hold arbitrary tool output.
//
// One file per idea: the dashboard, the trace list, the trace viewer and
// its timeline, labelling, label files and agreement, and security (the
// token, CSRF and the headers every response carries).
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/faultline/faultline/internal/discover"
	"github.com/faultline/faultline/internal/score"
	"github.com/faultline/faultline/internal/store"
)

// Config is what a Server serves and how.
type Config struct {
	Store Store
	// Token, when set, must come with every request (see security.go);
	// serving beyond loopback requires one.
	Token string
	// GroundTruth, when given, lets the trace viewer score each diagnosis
	// prediction by prediction; without it the viewer shows the stored
	// outcomes.
	GroundTruth score.Set
	// Aliases name models canonically (faultline.yaml); nil applies the
	// built-in rules only.
	Aliases store.ModelAliases
	// CodeNames names the codes of the user's own rules, for the report.
	CodeNames map[string]string
	Log       *slog.Logger
}

// Server is the web application.
type Server struct {
	cfg     Config
	log     *slog.Logger
	pages   *pages
	secrets *secrets
	handler http.Handler
	// reports keeps the dashboard's recent reports while the database is
	// unchanged.
	reports pageCache[builtReport]
	// agreements does the same for the agreement page's comparisons, and
	// patterns for the Patterns page's discoveries (seconds on a large
	// store).
	agreements pageCache[agreementView]
	patterns   pageCache[*discover.Result]
	// timeouts bound each connection (defaultTimeouts; tests shorten them).
	timeouts timeouts
}

// timeouts bound how long a connection may take over each part of an
// exchange, so that a client that sends or reads slowly, or keeps a
// connection open and idle, cannot hold it for ever.
type timeouts struct {
	// readHeader bounds a request's headers; read, its headers and body.
	readHeader, read time.Duration
	// write runs from the end of a request's headers to the end of its
	// response: it covers reading the body, the handler, and sending.
	write time.Duration
	// idle bounds the wait for the next request on a kept-alive connection.
	idle time.Duration
}

// defaultTimeouts are sized for the largest and slowest legitimate
// exchanges. A GET has no body; the largest body is a label file of
// maxUpload (32 MiB), which read takes in at 1.5 Mbit/s. The slowest page
// is an agreement or a dashboard over 100,000 traces (11 s and 2 s, see the
// README), and the largest responses are label exports and report
// downloads, so write leaves 2 minutes beyond the body for building and
// sending them.
var defaultTimeouts = timeouts{
	readHeader: 10 * time.Second,
	read:       3 * time.Minute,
	write:      5 * time.Minute,
	idle:       2 * time.Minute,
}

// New builds the application.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("web: no store")
	}
	if err := CheckToken(cfg.Token); err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	s := &Server{cfg: cfg, log: cfg.Log, timeouts: defaultTimeouts}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	var err error
	if s.pages, err = loadPages(cfg.CodeNames); err != nil {
		return nil, err
	}
	if s.secrets, err = newSecrets(cfg.Token); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /static/", staticHandler())
	mux.HandleFunc("GET /{$}", s.dashboard)
	mux.HandleFunc("GET /report/{format}", s.reportFile)
	mux.HandleFunc("GET /traces", s.traceList)
	mux.HandleFunc("GET /count", s.traceCount)
	mux.HandleFunc("GET /traces/{id}", s.traceView)
	mux.HandleFunc("GET /traces/{id}/steps", s.stepsFragment)
	mux.HandleFunc("GET /traces/{id}/steps/{n}", s.stepText)
	mux.HandleFunc("POST /traces/{id}/labels", s.saveLabels)
	mux.HandleFunc("GET /label/next", s.nextUnlabelled)
	mux.HandleFunc("POST /labeller", s.setLabeller)
	mux.HandleFunc("GET /labels", s.labelsPage)
	mux.HandleFunc("GET /labels/export", s.exportLabels)
	mux.HandleFunc("POST /labels/import", s.importLabels)
	mux.HandleFunc("GET /agreement", s.agreement)
	mux.HandleFunc("GET /compare", s.comparePage)
	mux.HandleFunc("GET /modes", s.modesPage)
	mux.HandleFunc("GET /modes/{code}", s.modePage)
	mux.HandleFunc("GET /patterns", s.patternsPage)
	s.handler = s.secure(mux)
	return s, nil
}

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// wellFormed refuses an address whose parameters are not UTF-8: every page
// reads them as text (a search becomes a pattern, a source a name), and a
// browser's own forms always send UTF-8.
func wellFormed(q url.Values) error {
	for k, vs := range q {
		if !utf8.ValidString(k) {
			return fmt.Errorf("parameter %q is not UTF-8", k)
		}
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return fmt.Errorf("parameter %s: %q is not UTF-8", k, v)
			}
		}
	}
	return nil
}

// Serve answers requests on ln until ctx is done, then lets the requests
// in flight finish (for up to 5 seconds). It refuses a listener beyond
// loopback without a token (see CheckAddress).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := CheckAddress(ln.Addr(), s.cfg.Token); err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.timeouts.readHeader,
		ReadTimeout:       s.timeouts.read,
		WriteTimeout:      s.timeouts.write,
		IdleTimeout:       s.timeouts.idle,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("stopping: %w", err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// CheckAddress refuses to serve beyond loopback without a token: anyone who
// can reach the address could read every trace and write labels.
func CheckAddress(addr net.Addr, token string) error {
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && token == "" {
		return fmt.Errorf("%s is reachable beyond this machine: serving there needs a token (--token or $FAULTLINE_TOKEN)", addr)
	}
	return nil
}
