package web

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// pageSize is how many traces a page of the list shows.
const pageSize = 50

// listView is a page of the trace list.
type listView struct {
	Filter     filter
	Menus      menus
	CountURL   string // where the number of traces selected is counted
	Rows       []listRow
	Next, Prev string // addresses of the next and previous pages
	// SortLinks are the addresses that sort by each order (the current one
	// reversed).
	SortLinks map[string]string
	Queue     string // the labelling queue of this selection
	Elapsed   time.Duration
}

// listRow is one trace of the list.
type listRow struct {
	store.Summary
	Task    string
	Outcome string // success, failure or unknown
	Result  string // the outcome in words
	Modes   []modeChip
	Hit     *searchHit
}

type modeChip struct {
	Code, Name string
	Sources    []string
}

// searchHit shows where the search matched in a trace.
type searchHit struct {
	Step, Count int
	Before      string
	Match       string
	After       string
}

func (s *Server) traceList(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	f, err := parseFilter(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ctx := r.Context()
	q := f.query(labellerSource(r), s.cfg.Aliases)
	q.Limit = pageSize
	q.After, q.Before = r.URL.Query().Get("after"), r.URL.Query().Get("before")
	page, err := s.cfg.Store.Browse(ctx, q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := listView{Filter: f, Queue: "/label/next?" + f.encode(), CountURL: "/count?" + f.encode(), SortLinks: map[string]string{}}
	if v.Menus, err = s.menus(r); err != nil {
		s.fail(w, r, err)
		return
	}
	pageLink := func(key, cursor string) string {
		if cursor == "" {
			return ""
		}
		vals := f.values()
		vals.Set(key, cursor)
		return "/traces?" + vals.Encode()
	}
	v.Next, v.Prev = pageLink("after", page.Next), pageLink("before", page.Prev)
	for _, order := range store.SortOrders {
		sorted := f
		sorted.Sort, sorted.Desc = order, order == f.Sort && !f.Desc
		if order == "id" && f.Sort == "" {
			sorted.Desc = !f.Desc
		}
		v.SortLinks[order] = "/traces?" + sorted.encode()
	}
	ids := make([]string, len(page.Traces))
	for i, t := range page.Traces {
		ids[i] = t.ID
	}
	var verdicts []store.ModeVerdict
	err = s.cfg.Store.ModeVerdicts(ctx, ids, f.sources(), func(v store.ModeVerdict) error {
		verdicts = append(verdicts, v)
		return nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var hits map[string]store.SearchHit
	if f.Search != "" {
		if hits, err = s.cfg.Store.SearchHits(ctx, f.Search, ids); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	for _, t := range page.Traces {
		row := listRow{Summary: t, Task: report.TaskTitle(t.Task, 90), Outcome: store.OutcomeClass(t.Outcome), Result: report.OutcomeText(t.Outcome)}
		row.Modes = presentModes(verdicts, t.ID)
		if h, ok := hits[t.ID]; ok {
			if row.Hit, err = s.hit(r, t.ID, h, f.Search); err != nil {
				s.fail(w, r, err)
				return
			}
		}
		v.Rows = append(v.Rows, row)
	}
	v.Elapsed = time.Since(start).Round(time.Millisecond)
	s.render(w, r, http.StatusOK, "traces", "", view{Title: "Traces", Nav: "traces", Body: v})
}

// traceCount says how many traces a filter selects. The list asks for it
// apart, after the page has come, since counting a selection means reading
// all of it: a page of 50 comes in milliseconds from 100,000 traces, a count
// with filters on findings or outcomes in a few hundred.
func (s *Server) traceCount(w http.ResponseWriter, r *http.Request) {
	f, err := parseFilter(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	n, err := s.cfg.Store.Count(r.Context(), f.query(labellerSource(r), s.cfg.Aliases))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "traces", "count", view{Body: n})
}

// presentModes lists the modes marked present on a trace, in taxonomy
// order, each with the sources that mark it.
func presentModes(verdicts []store.ModeVerdict, id string) []modeChip {
	by := map[string][]string{}
	for _, mv := range verdicts {
		if mv.Trace == id && mv.Verdict == trace.Present && !slices.Contains(by[mv.Mode], mv.Source) {
			by[mv.Mode] = append(by[mv.Mode], mv.Source)
		}
	}
	var out []modeChip
	for _, list := range []*[]taxonomy.Mode{&taxonomy.MAST.Modes, &taxonomy.System.Modes} {
		for _, m := range *list {
			if srcs, ok := by[m.Code]; ok {
				out = append(out, modeChip{Code: m.Code, Name: m.Name, Sources: srcs})
			}
		}
	}
	return out
}

// hitContext is how much text a search hit shows around the match.
const hitContext = 80

// hit reads the first matching step of a trace and cuts the text around
// the first word of the search in it.
func (s *Server) hit(r *http.Request, id string, h store.SearchHit, search string) (*searchHit, error) {
	out := &searchHit{Step: h.Steps[0], Count: h.Count}
	steps, err := s.cfg.Store.StepsAt(r.Context(), id, h.Steps[:1])
	if err != nil || len(steps) == 0 {
		return out, err
	}
	st := steps[0]
	text := strings.Join([]string{st.Text, st.Args, st.Tool}, "\n")
	loc := searchWords(search).FindStringIndex(text)
	if loc == nil {
		// The index matched what the tokenizer made of the words (accents,
		// joined punctuation); show the start.
		out.After = trace.Clip(trace.NormalizeSpace(text), 2*hitContext)
		return out, nil
	}
	from, to := max(0, loc[0]-hitContext), min(len(text), loc[1]+hitContext)
	out.Before = collapseSpace(strings.ToValidUTF8(text[from:loc[0]], ""))
	out.Match = text[loc[0]:loc[1]]
	out.After = collapseSpace(strings.ToValidUTF8(text[loc[1]:to], ""))
	if from > 0 {
		out.Before = "…" + out.Before
	}
	if to < len(text) {
		out.After += "…"
	}
	return out, nil
}

// collapseSpace makes every run of whitespace one space, keeping the ends,
// so that pieces cut around a match join as they were.
func collapseSpace(s string) string { return whitespace.ReplaceAllString(s, " ") }

var whitespace = regexp.MustCompile(`\s+`)

// searchWords matches any word or phrase of a search, ignoring case.
func searchWords(search string) *regexp.Regexp {
	var alts []string
	for _, term := range strings.FieldsFunc(search, func(r rune) bool { return r == '"' || r == ' ' || r == '*' }) {
		alts = append(alts, regexp.QuoteMeta(term))
	}
	if len(alts) == 0 {
		return regexp.MustCompile(`$^`)
	}
	return regexp.MustCompile(`(?i)` + strings.Join(alts, "|"))
}
