package web

import (
	"bytes"
	"context"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/faultline/faultline/analyze"
	"github.com/faultline/faultline/report"
)

// dashboardView is the dashboard: the cohort report of the selected
// traces, as `faultline report --format html` draws it, with every figure
// linked to the trace list of the traces behind it.
type dashboardView struct {
	Filter    filter
	Filtered  bool // some filter is set
	Menus     menus
	By        string
	Groupings []string
	Traces    int
	// Report is the report's sections, written by the report package's
	// own html/template, which has escaped everything a trace put in it.
	Report  template.HTML
	ListURL string
	// Downloads are the report of the same selection in each format.
	Downloads []download
	Elapsed   time.Duration
	// Built is how long the report took to build; Cached says it was kept
	// from an earlier view of the same database.
	Built  time.Duration
	Cached bool
}

// cohortReport is the report of the traces a filter selects, grouped by by.
func (s *Server) cohortReport(ctx context.Context, f filter, by, labeller string) (*analyze.Report, error) {
	opt := analyze.ReportOptions{By: by, Sources: f.sources()}
	// Only the source selection is the report's own; every other filter
	// picks the traces it covers.
	selection := f
	selection.Source = ""
	if selection.encode() != "" {
		var err error
		if opt.IDs, err = s.cfg.Store.IDs(ctx, f.query(labeller)); err != nil {
			return nil, err
		}
	}
	return analyze.BuildReport(ctx, s.cfg.Store, opt)
}

// reportFile downloads the dashboard's report in one of the report's
// formats, as `faultline report` writes it.
func (s *Server) reportFile(w http.ResponseWriter, r *http.Request) {
	f, by, err := dashboardQuery(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	format := r.PathValue("format")
	types := map[string]string{"text": "text/plain; charset=utf-8", "md": "text/markdown; charset=utf-8", "html": "text/html; charset=utf-8", "json": "application/json"}
	extensions := map[string]string{"text": "txt", "md": "md", "html": "html", "json": "json"}
	if types[format] == "" {
		s.fail(w, r, badRequestf("report format %q: use one of %s", format, strings.Join(report.Formats, ", ")))
		return
	}
	rep, err := s.cohortReport(r.Context(), f, by, labellerSource(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var b bytes.Buffer
	if err := report.Write(&b, rep, format); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", types[format])
	w.Header().Set("Content-Disposition", `attachment; filename="faultline-report.`+extensions[format]+`"`)
	w.Write(b.Bytes())
}

// download is a link to a file.
type download struct{ Name, URL string }

// builtReport is the costly part of the dashboard, kept in the server's
// cache.
type builtReport struct {
	Traces int
	HTML   template.HTML
	Took   time.Duration
}

// buildReport builds the cohort report of the selected traces, and its
// sections as the dashboard shows them.
func (s *Server) buildReport(ctx context.Context, f filter, by, labeller string) (builtReport, error) {
	start := time.Now()
	rep, err := s.cohortReport(ctx, f, by, labeller)
	if err != nil {
		return builtReport{}, err
	}
	out := builtReport{Traces: rep.Traces}
	if rep.Traces > 0 {
		var b bytes.Buffer
		link := func(t report.Traces) string {
			if n, ok := f.narrowed(by, t); ok {
				return "/traces?" + n.encode()
			}
			return ""
		}
		if err := report.WriteHTMLSections(&b, rep, link); err != nil {
			return builtReport{}, err
		}
		out.HTML = template.HTML(b.String())
	}
	out.Took = time.Since(start).Round(time.Millisecond)
	return out, nil
}

// dashboardQuery reads the dashboard's filter and grouping.
func dashboardQuery(r *http.Request) (filter, string, error) {
	f, err := parseFilter(r)
	if err != nil {
		return f, "", err
	}
	by := r.URL.Query().Get("by")
	if by == "" {
		by = "model"
	}
	if !slices.Contains(analyze.Groupings, by) {
		return f, "", badRequestf("by %q: use one of %s", by, strings.Join(analyze.Groupings, ", "))
	}
	return f, by, nil
}

func (s *Server) dashboard(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	f, by, err := dashboardQuery(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ctx := r.Context()
	labeller := labellerSource(r)
	built, cached, err := s.reports.get(ctx, s.cfg.Store, by+"\x00"+f.encode()+"\x00"+labeller, func() (builtReport, error) {
		return s.buildReport(ctx, f, by, labeller)
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := dashboardView{Filter: f, Filtered: f.encode() != "", By: by, Groupings: analyze.Groupings, Traces: built.Traces,
		Report: built.HTML, Built: built.Took, Cached: cached, ListURL: "/traces?" + f.encode()}
	q := f.values()
	if by != "model" {
		q.Set("by", by)
	}
	for _, d := range []struct{ name, format string }{{"HTML", "html"}, {"Markdown", "md"}, {"JSON", "json"}, {"text", "text"}} {
		v.Downloads = append(v.Downloads, download{d.name, "/report/" + d.format + "?" + q.Encode()})
	}
	if v.Menus, err = s.menus(r); err != nil {
		s.fail(w, r, err)
		return
	}
	v.Elapsed = time.Since(start).Round(time.Millisecond)
	s.render(w, r, http.StatusOK, "dashboard", "", view{Title: "Dashboard", Nav: "dashboard", Body: v})
}
