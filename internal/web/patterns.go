package web

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/faultline/faultline/internal/discover"
)

// The patterns page is a page of its own, loaded with the others.

// patternsView is the patterns page: the recurring failure patterns of the
// selected traces, as `faultline discover` finds them.
type patternsView struct {
	Filter   filter
	Filtered bool
	Menus    menus
	Kind     string // errors, endings, findings, or "" for all
	// ID, when set, shows the one pattern of that ID (or prefix), ranked
	// or not: the address a pattern is named by.
	ID        string
	Kinds     []discover.Kind
	MinFailed int
	Result    *discover.Result
	Patterns  []patternView
	Elapsed   time.Duration
	// Cached says the patterns were kept from an earlier view of the
	// unchanged database.
	Cached bool
}

// patternView is one pattern with the addresses the page links to.
type patternView struct {
	*discover.Pattern
	Rank   int
	Quotes []quoteView
	// Traces are the first maxPatternTraces traces with the pattern (its
	// failed ones first); More counts the others.
	Traces []traceLink
	More   int
}

type quoteView struct {
	discover.Quote
	URL string
}

type traceLink struct {
	discover.TraceRef
	URL string
}

const (
	// maxPatternTraces is how many traces of a pattern the page links to:
	// discover --json lists them all.
	maxPatternTraces = 60
	// maxPatterns is how many patterns the page shows.
	maxPatterns = 50
)

// patternsPage finds the recurring failure patterns of the traces the
// page's filters select.
func (s *Server) patternsPage(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	f, err := parseFilter(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	v := patternsView{Filter: f, Filtered: f.encode() != "", Kind: q.Get("kind"), Kinds: discover.Kinds, MinFailed: 2, ID: strings.ToLower(q.Get("id"))}
	var kinds []discover.Kind
	switch v.Kind {
	case "":
	case string(discover.KindError), string(discover.KindEnding), string(discover.KindFinding):
		kinds = []discover.Kind{discover.Kind(v.Kind)}
	default:
		s.fail(w, r, badRequestf("kind %q: use errors, endings or findings", v.Kind))
		return
	}
	if mf := q.Get("min-failed"); mf != "" {
		if v.MinFailed, err = strconv.Atoi(mf); err != nil || v.MinFailed < 1 {
			s.fail(w, r, badRequestf("min-failed %q: a number of failed runs, from 1", mf))
			return
		}
	}
	if v.Menus, err = s.menus(r); err != nil {
		s.fail(w, r, err)
		return
	}
	opt := discover.Options{Sources: f.sources(), Kinds: kinds, MinFailed: v.MinFailed, Limit: maxPatterns, Aliases: s.cfg.Aliases}
	if v.ID != "" {
		opt.Limit = 0
	}
	labeller := ""
	if f.Todo {
		labeller = labellerSource(r) // only "not labelled by me" depends on who asks
	}
	key := fmt.Sprint(v.Link(""), "\x00", opt.Limit, "\x00", labeller)
	v.Result, v.Cached, err = s.patterns.get(r.Context(), s.cfg.Store, key, func() (*discover.Result, error) {
		// Only the source selection is discovery's own (the findings
		// that make signatures); every other filter picks the traces.
		selection := f
		selection.Source = ""
		if selection.encode() != "" {
			var err error
			if opt.IDs, err = s.cfg.Store.IDs(r.Context(), f.query(labeller, s.cfg.Aliases)); err != nil {
				return nil, err
			}
		}
		res, err := discover.Discover(r.Context(), s.cfg.Store, opt)
		if err != nil {
			return nil, fmt.Errorf("discovering patterns: %w", err)
		}
		return res, nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for i, p := range v.Result.Patterns {
		if !strings.HasPrefix(p.ID, v.ID) {
			continue
		}
		pv := patternView{Pattern: p, Rank: i + 1}
		for _, quote := range p.Quotes {
			pv.Quotes = append(pv.Quotes, quoteView{Quote: quote, URL: siteURL(quote.Trace, quote.Step)})
		}
		for _, t := range p.Traces[:min(len(p.Traces), maxPatternTraces)] {
			pv.Traces = append(pv.Traces, traceLink{TraceRef: t, URL: siteURL(t.ID, t.Step)})
		}
		pv.More = len(p.Traces) - len(pv.Traces)
		v.Patterns = append(v.Patterns, pv)
	}
	if v.ID != "" && len(v.Patterns) == 0 {
		s.message(w, r, http.StatusNotFound, "No such pattern", "No pattern of these traces has the ID "+v.ID+
			" (with at least "+strconv.Itoa(v.MinFailed)+" failed runs, and the signatures and filters it was found with).")
		return
	}
	v.Elapsed = time.Since(start).Round(time.Millisecond)
	s.render(w, r, http.StatusOK, "patterns", "", view{Title: "Patterns", Nav: "patterns", Body: v})
}

// siteURL opens the page of trace id at step, or at its top when step is
// -1 (nowhere in particular).
func siteURL(id string, step int) string {
	if step < 0 {
		return traceURL(id)
	}
	return stepURL(id, step)
}

// Share words a count of traces out of a total.
func (p patternView) Share(k, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d of 0", k)
	}
	return fmt.Sprintf("%d of %d (%.0f%%)", k, n, 100*float64(k)/float64(n))
}

// Link is the address of the page with the same filters, showing the
// pattern id alone ("": every pattern).
func (v patternsView) Link(id string) string {
	q := v.Filter.values()
	if v.Kind != "" {
		q.Set("kind", v.Kind)
	}
	if v.MinFailed != 2 {
		q.Set("min-failed", strconv.Itoa(v.MinFailed))
	}
	if id != "" {
		q.Set("id", id)
	}
	if len(q) == 0 {
		return "/patterns"
	}
	return "/patterns?" + q.Encode()
}
