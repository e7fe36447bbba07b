package web

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/rules"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// staticHandler serves the embedded assets, and the report's style sheet
// beside them (the dashboard shows the report's sections).
func staticHandler() http.Handler {
	sub, _ := fs.Sub(staticFiles, "static") // the directory is embedded, so never fails
	files := http.StripPrefix("/static/", http.FileServerFS(sub))
	css := []byte(report.CSS())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Assets change only with the binary; the browser may keep them
		// while it checks back.
		w.Header().Set("Cache-Control", "no-cache")
		if r.URL.Path == "/static/report.css" {
			w.Header().Set("Content-Type", "text/css; charset=utf-8")
			w.Write(css)
			return
		}
		files.ServeHTTP(w, r)
	})
}

// pages holds each page's template set: the layout and shared parts, and
// the page's own "content" (and fragments) on top.
type pages struct {
	byName map[string]*template.Template
}

// pageNames are the templates in templates/ that are pages (the others,
// layout.html and parts.html, are shared by all).
var pageNames = []string{"dashboard", "traces", "trace", "labels", "agreement", "modes", "compare", "patterns", "message"}

// loadPages parses every page; codeNames names the codes of the user's own
// rules wherever a page names a mode.
func loadPages(codeNames map[string]string) (*pages, error) {
	base, err := template.New("").Funcs(funcs).Funcs(template.FuncMap{"modeName": func(code string) string {
		return rules.ModeName(code, codeNames)
	}}).ParseFS(templateFiles, "templates/layout.html", "templates/parts.html")
	if err != nil {
		return nil, fmt.Errorf("web templates: %w", err)
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, name := range pageNames {
		t, err := template.Must(base.Clone()).ParseFS(templateFiles, "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("web templates: %w", err)
		}
		p.byName[name] = t
	}
	return p, nil
}

// view is what every page's layout needs, around the page's own data.
type view struct {
	Title    string
	Nav      string // the menu entry to mark
	CSRF     string
	Labeller string
	Body     any
}

// render writes a page, or with fragment set one of its fragments, whole
// or not at all: a template error becomes a 500, not half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, page, fragment string, v view) {
	t, ok := s.pages.byName[page]
	if !ok {
		s.fail(w, r, fmt.Errorf("no page %q", page))
		return
	}
	v.CSRF = s.csrf(r)
	v.Labeller = labellerOf(r)
	var b bytes.Buffer
	name := "layout"
	if fragment != "" {
		name = fragment
	}
	if err := t.ExecuteTemplate(&b, name, v); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// message shows a page that only says something: nothing found, nothing
// left to label, a bad request.
func (s *Server) message(w http.ResponseWriter, r *http.Request, status int, title, text string) {
	s.render(w, r, status, "message", "", view{Title: title, Body: text})
}

// fail answers a request that could not be served: not found, bad input,
// or (logged) an internal error.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		http.Error(w, err.Error(), http.StatusNotFound)
	case errors.As(err, new(badRequest)) || errors.Is(err, store.ErrBadCursor) || errors.Is(err, store.ErrEmptySearch) || errors.Is(err, analyze.ErrCompare):
		http.Error(w, err.Error(), http.StatusBadRequest)
	case r.Context().Err() != nil:
		// The browser went away; nobody to tell.
	default:
		s.log.Error("serving", "path", r.URL.Path, "err", err)
		http.Error(w, "internal error: "+err.Error(), http.StatusInternalServerError)
	}
}

// sendFile answers with a file to download, written whole before it is
// sent so that a failure is an error page rather than a file cut short.
// name must hold no quote or backslash.
func (s *Server) sendFile(w http.ResponseWriter, r *http.Request, contentType, name string, write func(io.Writer) error) {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Write(b.Bytes())
}

// badRequest is an error in what the request asked for.
type badRequest struct{ msg string }

func (e badRequest) Error() string { return e.msg }

func badRequestf(format string, args ...any) error { return badRequest{fmt.Sprintf(format, args...)} }

// htmx says whether a request comes from htmx, which wants a fragment.
func htmx(r *http.Request) bool { return r.Header.Get("HX-Request") == "true" }

var funcs = template.FuncMap{
	"modeDefinition": func(code string) string {
		if m, _, ok := taxonomy.Lookup(code); ok {
			return m.Definition
		}
		return ""
	},
	// modeURL links a mode code to its page; every page shows codes through
	// the "mode" template of parts.html, which uses it.
	"modeURL": modeURL,
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05")
	},
	"size": byteSize,
	// count is "1 trace", "2 traces".
	"count": func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %s", n, many)
	},
	// sourceClass groups annotation sources for colour: detector, judge,
	// human, mad, other.
	"sourceClass": func(source string) string {
		kind, _, _ := strings.Cut(source, ":")
		switch kind {
		case "detector", "judge", "human", "mad":
			return "src-" + kind
		}
		return "src-other"
	},
	"traceURL": traceURL,
	"stepURL":  stepURL,
	"sorted":   trace.SortedSteps,
	"add":      func(a, b int) int { return a + b },
	"deref":    func(p *float64) float64 { return *p },
	// wrap is the page's view around another body, for the templates of
	// fragments that pages also show inside themselves.
	"wrap": func(v view, body any) view {
		v.Body = body
		return v
	},
	"verdicts": func() []trace.Verdict { return verdicts },
	// field is one filter menu: a select of the values there are, or a
	// text field when there are too many to list.
	"field": func(label, name, value string, options []string) menuField {
		return menuField{Label: label, Name: name, Value: value, Options: options}
	},
}

type menuField struct {
	Label, Name, Value string
	Options            []string
}

// traceURL is the address of a trace's page (ids can hold any character).
func traceURL(id string) string { return "/traces/" + url.PathEscape(id) }

// byteSize words a size: 812 B, 14 KB, 2.3 MB.
func byteSize(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000_000:
		return fmt.Sprintf("%.0f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
