// Package guardproxy is faultline guard's HTTP proxy: an OpenAI-compatible
// endpoint in front of a model's API that runs a guard.Session over each
// agent's conversation as it grows and applies the session's decisions to
// the traffic (a response header, a corrective message in the next request,
// a request made again at a finish gate, a refusal).
//
// POST /v1/chat/completions and POST /v1/responses are guarded; every
// other path is forwarded untouched, and GET /faultline/guard/stats reports the proxy's counters.
package guardproxy

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"

	"github.com/faultline/faultline/guard"
	"github.com/faultline/faultline/ingest"
)

// Paths the proxy serves itself.
const (
	ChatPath      = "/v1/chat/completions"
	ResponsesPath = "/v1/responses"
	StatsPath     = "/faultline/guard/stats"
)

// Defaults of Config.
const (
	DefaultTimeout   = 5 * time.Minute
	DefaultSaveEvery = 50
	// maxBody bounds a guarded request read into memory: a long agent run's
	// whole history, with room to spare.
	maxBody = 64 << 20
)

// Config is what a Proxy needs.
type Config struct {
	// Upstream is the API the proxy stands in front of; request paths are
	// appended to its path.
	Upstream *url.URL
	Policy   *guard.Policy
	// Timeout bounds each request's exchange with the upstream, streams
	// included (DefaultTimeout when 0).
	Timeout time.Duration
	// Client calls the upstream (one keeping many idle connections when
	// nil); Timeout, not the client's own, bounds the call.
	Client *http.Client
	Log    *slog.Logger
	// Decisions, when set, receives every decision as a JSON line.
	Decisions io.Writer
	// Store, when set, receives each session's run as a trace of format
	// "guard" whose findings are its decisions: when the session ends, is
	// evicted or starts over, every SaveEvery decisions, and at Close.
	Store     ingest.Sink
	SaveEvery int
	// OTLP, when set, is an OTLP/HTTP endpoint (such as
	// http://localhost:4318) that receives every decision, as it is made,
	// as the gen_ai.evaluation.result event faultline export writes for a
	// finding: a log record posted to /v1/logs, or with OTLPSpans a span
	// posted to /v1/traces.
	OTLP      string
	OTLPSpans bool
}

// Proxy is the guard's HTTP handler. Close stores what it holds.
type Proxy struct {
	cfg      Config
	sessions *sessions
	chains   *chains
	stats    stats
	log      *decisionLog
	saver    *saver
	otlp     *otlpExporter
	forward  *httputil.ReverseProxy
}

// New makes a proxy. When cfg.Store or cfg.OTLP is set, it writes runs or
// posts decisions in the background until Close.
func New(cfg Config) *Proxy {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Client == nil {
		// Many agents share one upstream: more idle connections to it are
		// kept than the default two, which at a few hundred requests a
		// second would open a connection for most requests.
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 256
		cfg.Client = &http.Client{Transport: t}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.SaveEvery <= 0 {
		cfg.SaveEvery = DefaultSaveEvery
	}
	p := &Proxy{cfg: cfg, stats: newStats(), chains: newChains()}
	if cfg.Decisions != nil {
		p.log = &decisionLog{w: cfg.Decisions}
	}
	if cfg.Store != nil {
		p.saver = startSaver(cfg.Store, cfg.Log)
	}
	if cfg.OTLP != "" {
		p.otlp = startOTLP(cfg.OTLP, cfg.OTLPSpans, cfg.Client, cfg.Log)
	}
	p.sessions = newSessions(cfg.Policy.MaxSessions, cfg.Policy.SessionIdle, p.evicted)
	p.forward = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = p.target(pr.In.URL)
			pr.Out.Host = ""
		},
		Transport:    cfg.Client.Transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) { p.upstreamFailed(w, r, err) },
		// Streams pass as they come.
		FlushInterval: -1,
	}
	return p
}

// ServeHTTP routes a request: chat completions and responses are guarded, the stats are
// answered here, everything else goes upstream untouched.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == ChatPath:
		p.guarded(w, r, parseChat)
	case r.Method == http.MethodPost && r.URL.Path == ResponsesPath:
		p.guarded(w, r, parseResponses)
	case r.Method == http.MethodGet && r.URL.Path == StatsPath:
		p.serveStats(w)
	default:
		p.passThrough(w, r)
	}
}

// passThrough forwards a request untouched, within the upstream timeout.
func (p *Proxy) passThrough(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), p.cfg.Timeout)
	defer cancel()
	p.forward.ServeHTTP(w, r.WithContext(ctx))
}

// target is the upstream's URL for a request's.
func (p *Proxy) target(in *url.URL) *url.URL {
	out := *p.cfg.Upstream
	out.Path = singleSlash(p.cfg.Upstream.Path, in.Path)
	out.RawPath = ""
	out.RawQuery = in.RawQuery
	return &out
}

func singleSlash(a, b string) string {
	switch {
	case a == "" || a == "/":
		return b
	case a[len(a)-1] == '/' && len(b) > 0 && b[0] == '/':
		return a + b[1:]
	case a[len(a)-1] != '/' && (len(b) == 0 || b[0] != '/'):
		return a + "/" + b
	}
	return a + b
}
