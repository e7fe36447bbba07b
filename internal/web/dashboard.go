package web

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/report"
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
	// Headline is the figures shown first.
	Headline headline
	// Report is the report's sections, written by the report package's
	// own html/template, which has escaped everything a trace put in it.
	Report  template.HTML
	ListURL string
	// Downloads are the report of the same selection in each format.
	Downloads []download
	// Compare is the two groups compared ("" when none is picked);
	// CompareWith the groups of the grouping, to pick from.
	Compare     []string
	CompareWith []string
	Elapsed     time.Duration
	// Built is how long the report took to build; Cached says it was kept
	// from an earlier view of the same database.
	Built  time.Duration
	Cached bool
}

// cohortReport is the report a dashboard query asks for.
func (s *Server) cohortReport(ctx context.Context, q reportQuery, labeller string) (*analyze.Report, error) {
	opt := analyze.ReportOptions{By: q.By, Sources: q.Filter.sources(), Compare: q.Compare, Aliases: s.cfg.Aliases, CodeNames: s.cfg.CodeNames}
	// Only the source selection is the report's own; every other filter
	// picks the traces it covers.
	selection := q.Filter
	selection.Source = ""
	if selection.encode() != "" {
		var err error
		if opt.IDs, err = s.cfg.Store.IDs(ctx, q.Filter.query(labeller, s.cfg.Aliases)); err != nil {
			return nil, err
		}
	}
	return analyze.BuildReport(ctx, s.cfg.Store, opt)
}

// reportFile downloads the dashboard's report in one of the report's
// formats, as `faultline report` writes it.
func (s *Server) reportFile(w http.ResponseWriter, r *http.Request) {
	q, err := dashboardQuery(r)
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
	built, _, err := s.keptReport(r, q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.sendFile(w, r, types[format], "faultline-report."+extensions[format], func(w io.Writer) error { return report.Write(w, built.Report, format) })
}

// download is a link to a file.
type download struct{ Name, URL string }

// builtReport is the costly part of the dashboard, kept in the server's
// cache.
type builtReport struct {
	Report   *analyze.Report
	Headline headline
	HTML     template.HTML
	Took     time.Duration
}

// keptReport is the report a dashboard query asks for, from the cache when
// the database has not changed since it was built.
func (s *Server) keptReport(r *http.Request, q reportQuery) (builtReport, bool, error) {
	labeller := ""
	if q.Filter.Todo {
		labeller = labellerSource(r) // only "not labelled by me" depends on who asks
	}
	return s.reports.get(r.Context(), s.cfg.Store, q.values().Encode()+"\x00"+labeller, func() (builtReport, error) {
		return s.buildReport(r.Context(), q, labeller)
	})
}

// buildReport builds the cohort report of the selected traces, and its
// sections as the dashboard shows them.
func (s *Server) buildReport(ctx context.Context, q reportQuery, labeller string) (builtReport, error) {
	start := time.Now()
	rep, err := s.cohortReport(ctx, q, labeller)
	if err != nil {
		return builtReport{}, err
	}
	out := builtReport{Report: rep}
	if rep.Traces > 0 {
		var b bytes.Buffer
		link := func(t report.Traces) string {
			if t.Group == "" && q.Compare != nil {
				return "" // both compared groups: no one filter lists them
			}
			if n, ok := q.Filter.narrowed(q.By, t); ok {
				return "/traces?" + n.encode()
			}
			return ""
		}
		out.Headline = headlineOf(rep, link)
		if err := report.WriteHTMLSections(&b, rep, link); err != nil {
			return builtReport{}, err
		}
		out.HTML = template.HTML(b.String())
	}
	out.Took = time.Since(start).Round(time.Millisecond)
	return out, nil
}

// reportQuery is what a dashboard shows: the traces a filter selects,
// grouped by a field, and perhaps two of the groups compared.
type reportQuery struct {
	Filter  filter
	By      string
	Compare []string // two groups, or none
}

// values is the query as address parameters.
func (q reportQuery) values() url.Values {
	v := q.Filter.values()
	if q.By != "model" {
		v.Set("by", q.By)
	}
	for _, g := range q.Compare {
		v.Add("compare", g)
	}
	return v
}

// dashboardQuery reads the dashboard's filter, grouping and comparison.
func dashboardQuery(r *http.Request) (reportQuery, error) {
	f, err := parseFilter(r)
	if err != nil {
		return reportQuery{}, err
	}
	q := reportQuery{Filter: f, By: r.URL.Query().Get("by")}
	if q.By == "" {
		q.By = "model"
	}
	if !slices.Contains(analyze.Groupings, q.By) {
		return q, badRequestf("by %q: use one of %s", q.By, strings.Join(analyze.Groupings, ", "))
	}
	for _, g := range r.URL.Query()["compare"] {
		if g != "" {
			q.Compare = append(q.Compare, g)
		}
	}
	if len(q.Compare) == 1 {
		return q, badRequestf("compare %q with which %s? pick two groups", q.Compare[0], q.By)
	}
	return q, nil
}

func (s *Server) dashboard(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	q, err := dashboardQuery(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	params := q.values().Encode()
	built, cached, err := s.keptReport(r, q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f := q.Filter
	v := dashboardView{Filter: f, Filtered: f.encode() != "", By: q.By, Groupings: analyze.Groupings, Traces: built.Report.Traces,
		Headline: built.Headline, Report: built.HTML, Built: built.Took, Cached: cached}
	if q.Compare == nil {
		v.ListURL = "/traces?" + f.encode() // with a comparison, no one filter lists its traces
	}
	for _, d := range []struct{ name, format string }{{"HTML", "html"}, {"Markdown", "md"}, {"JSON", "json"}, {"text", "text"}} {
		v.Downloads = append(v.Downloads, download{d.name, "/report/" + d.format + "?" + params})
	}
	if v.Menus, err = s.menus(r); err != nil {
		s.fail(w, r, err)
		return
	}
	v.CompareWith = map[string][]string{"model": v.Menus.Models, "system": v.Menus.Systems, "scenario": v.Menus.Scenarios}[q.By]
	v.Compare = make([]string, 2) // "" where none is picked
	copy(v.Compare, q.Compare)
	v.Elapsed = time.Since(start).Round(time.Millisecond)
	s.render(w, r, http.StatusOK, "dashboard", "", view{Title: "Dashboard", Nav: "dashboard", Body: v})
}

// headline is what the dashboard says first, above the report's tables:
// how many traces, how many succeeded, which fatal mode is commonest, and
// which mode differs most between the groups.
type headline struct {
	Traces, Groups int
	By             string // what a group is: model, system or scenario
	// Success is the cohort's success rate; HasOutcomes is false when no
	// trace has an outcome.
	Success     share
	HasOutcomes bool
	// Fatal is the fatal mode found in the most failed traces of the
	// cohort; nil, with NoFatal saying why, when no mode is fatal.
	Fatal   *fatalMode
	NoFatal string
	// Spread is the mode whose share of traces differs most between two
	// groups of at least MinTraces traces; nil, with NoSpread saying why,
	// when no two groups compare.
	Spread    *modeSpread
	NoSpread  string
	MinTraces int
}

// share is a proportion as the headline words it.
type share struct{ analyze.Proportion }

// Percent is the share as a whole percentage.
func (s share) Percent() string {
	v, _ := s.Share()
	return fmt.Sprintf("%.0f%%", 100*v)
}

// Interval is the share's 95% Wilson interval, "lo–hi%".
func (s share) Interval() string {
	iv, _ := s.Proportion.Interval()
	return fmt.Sprintf("%.0f–%.0f%%", 100*iv.Lo, 100*iv.Hi)
}

// fatalMode is a fatal mode with its shares of failed and successful
// traces, and the address of the failed traces that show it.
type fatalMode struct {
	Mode, Name        string
	Failed, Succeeded share
	Link              string
}

// modeSpread is a mode's share of traces in the group where it is most
// common and in the one where it is least.
type modeSpread struct {
	Mode, Name        string
	High, Low         share
	HighName, LowName string
	HighLink          string // the traces of the first group with the mode
	// Ties counts the other modes whose spread is as large: the first in
	// taxonomy order is shown.
	Ties int
}

// Points is the difference between the two shares, in percentage points.
func (s modeSpread) Points() float64 {
	hi, _ := s.High.Share()
	lo, _ := s.Low.Share()
	return 100 * (hi - lo)
}

// minSpreadTraces is how many traces a group needs to take part in the
// spread: below it one trace moves a share by a third or more, and the
// smallest groups would always show the largest differences. (Four lets
// the bundled example cohort, four runs a model, show one; the headline
// gives the counts, so that a small group reads as small.)
const minSpreadTraces = 4

// headlineOf picks the dashboard's first figures from a report; link
// gives the address of the traces behind a figure.
func headlineOf(r *analyze.Report, link report.LinkFunc) headline {
	h := headline{Traces: r.Traces, Groups: len(r.Groups), By: r.By, Success: share{r.All.SuccessRate}, HasOutcomes: r.HasOutcomes(), MinTraces: minSpreadTraces}
	var fatal *analyze.ModeStats
	for _, m := range r.All.Modes {
		if m.Class == analyze.Fatal && (fatal == nil || m.Failed.K > fatal.Failed.K) {
			fatal = m
		}
	}
	switch {
	case fatal != nil:
		h.Fatal = &fatalMode{Mode: fatal.Mode, Name: fatal.Name, Failed: share{fatal.Failed}, Succeeded: share{fatal.Succeeded},
			Link: link(report.Traces{Outcome: "failure", Modes: []string{fatal.Mode}})}
	case !h.HasOutcomes:
		h.NoFatal = "no trace has an outcome, so no mode can be called fatal"
	case r.Rule.Uncalled(r.All) != "":
		h.NoFatal = fmt.Sprintf("too few outcomes to call one: %d failed and %d successful traces, where the rule needs %d failed and %d successful",
			r.All.Failed, r.All.Succeeded, r.Rule.MinFailed, r.Rule.MinSucceeded)
	default:
		h.NoFatal = "no mode is significantly more common in failed traces than in successful ones"
	}
	var groups []*analyze.Group
	for _, g := range r.Groups {
		if g.Traces >= minSpreadTraces {
			groups = append(groups, g)
		}
	}
	if len(groups) < 2 {
		h.NoSpread = fmt.Sprintf("needs two %ss with at least %d traces each", r.By, minSpreadTraces)
		return h
	}
	for _, m := range r.All.Modes { // in taxonomy order: the first of equal spreads wins
		s := modeSpread{Mode: m.Mode, Name: m.Name}
		for _, g := range groups {
			p := share{g.Mode(m.Mode).All}
			if s.HighName == "" || above(p, s.High) {
				s.High, s.HighName = p, g.Name
			}
			if s.LowName == "" || above(s.Low, p) {
				s.Low, s.LowName = p, g.Name
			}
		}
		switch {
		case s.Points() == 0:
		case h.Spread == nil || s.Points() > h.Spread.Points():
			h.Spread = &s
		case s.Points() == h.Spread.Points():
			h.Spread.Ties++
		}
	}
	if h.Spread == nil {
		h.NoSpread = fmt.Sprintf("no MAST mode's share differs between the %ss", r.By)
		return h
	}
	h.Spread.HighLink = link(report.Traces{Group: h.Spread.HighName, Modes: []string{h.Spread.Mode}})
	return h
}

// above reports whether share a is larger than share b.
func above(a, b share) bool {
	x, _ := a.Share()
	y, _ := b.Share()
	return x > y
}
