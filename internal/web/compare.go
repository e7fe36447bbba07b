package web

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/faultline/faultline/internal/compare"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// compareView is the compare page: two runs of one task side by side,
// their steps aligned by tool call.
type compareView struct {
	// Pick, when set, is all the page shows: the form to name the other
	// run, and runs of the same task to choose from.
	Pick    *comparePick
	A, B    compareSide
	Counts  compare.Counts
	Rows    []compareRow
	Elapsed time.Duration
}

// compareSide is one run at the top of the page.
type compareSide struct {
	compare.Side
	Task     string
	Result   string // success, failure or unknown
	Outcome  string // the primary outcome in words
	Duration string
	// Modes are the run's modes by source, each marked when the other run
	// has it from no source.
	Modes []compareSource
}

type compareSource struct {
	Source string
	Modes  []compareMode
}

type compareMode struct {
	Code string
	Only bool // the other run does not have it
}

// compareRow is a row with the steps of each side, as the page shows
// them.
type compareRow struct {
	compare.Row
	A, B *compareCell
}

type compareCell struct {
	*compare.Cell
	Label   string // the cell's label, shortened as notes are
	TraceID string
	At      int // the step the cell links to: its call, or its first step
	Notes   []compareNote
}

// compareNote is a message or reasoning of a row, shortened.
type compareNote struct {
	Index int
	Kind  string
	Text  string
}

// noteLength is how much of a message, reasoning or call a row shows; the
// whole is one click away, on the trace's page.
const noteLength = 240

// othersShown is how many other runs of the same task the trace page
// offers to compare with.
const othersShown = 5

// comparePage serves /compare?a=ID&b=ID. Without b it offers runs to
// compare a with: as a fragment for the trace page's "Compare with…" box
// (htmx), or as a page of its own.
func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ctx := r.Context()
	q := r.URL.Query()
	if err := wellFormed(q); err != nil {
		s.fail(w, r, badRequest{err.Error()})
		return
	}
	argA, argB := strings.TrimSpace(q.Get("a")), strings.TrimSpace(q.Get("b"))
	if argA == "" {
		s.fail(w, r, badRequestf("compare needs a, the id of a trace (and b, the other's)"))
		return
	}
	a, err := s.resolveLoad(ctx, "a", argA)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if argB == "" {
		others, err := s.othersOf(ctx, a)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		pick := &comparePick{Trace: a, Others: others}
		if htmx(r) {
			s.render(w, r, http.StatusOK, "compare", "others", view{Body: pick})
			return
		}
		s.render(w, r, http.StatusOK, "compare", "", view{Title: "Compare " + a.ID, Nav: "traces", Body: compareView{Pick: pick}})
		return
	}
	b, err := s.resolveLoad(ctx, "b", argB)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if a.ID == b.ID {
		s.fail(w, r, badRequestf("a and b are the same trace, %s: name two runs", a.ID))
		return
	}
	v := newCompareView(a, b)
	v.Elapsed = time.Since(start).Round(time.Millisecond)
	s.render(w, r, http.StatusOK, "compare", "", view{Title: "Compare " + a.ID + " with " + b.ID, Nav: "traces", Body: v})
}

// resolveLoad reads the whole trace an id or unique prefix names. A
// prefix that names none is not found; one that names several (or a store
// that cannot answer) is reported with the resolver's words, which list
// the traces it matched.
func (s *Server) resolveLoad(ctx context.Context, param, idOrPrefix string) (*trace.Trace, error) {
	id, err := s.cfg.Store.Resolve(ctx, idOrPrefix)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, err
	case err != nil && ctx.Err() == nil:
		return nil, badRequestf("%s: %v", param, err)
	case err != nil:
		return nil, err
	}
	return s.cfg.Store.Load(ctx, id)
}

// comparePick offers the runs of the same task to compare a trace with.
type comparePick struct {
	Trace  *trace.Trace
	Others []compareOther
}

// compareOther is a run to compare with.
type compareOther struct {
	store.Summary
	Result string // success, failure or unknown
}

// othersOf lists up to othersShown other runs of the trace's scenario (of
// its task, for traces with no scenario, among the first page of its
// system's): runs of the same task first, and among them one run of each
// model before a second of any, the trace's own model after the others in
// each round (comparing models is the usual question, and a model's many
// runs should not crowd out the others).
func (s *Server) othersOf(ctx context.Context, t *trace.Trace) ([]compareOther, error) {
	q := store.TraceQuery{Limit: 200}
	if t.Scenario != "" {
		q.Scenario = []string{t.Scenario}
	} else {
		q.System = []string{t.System}
	}
	page, err := s.cfg.Store.Browse(ctx, q)
	if err != nil {
		return nil, err
	}
	type ranked struct {
		compareOther
		rank [3]int // other task, the run's round within its model, same model
	}
	var others []ranked
	round := map[string]int{}
	for _, sm := range page.Traces {
		if sm.ID == t.ID || (t.Scenario == "" && sm.Task != t.Task) {
			continue
		}
		others = append(others, ranked{compareOther{Summary: sm, Result: store.OutcomeClass(sm.Outcome)},
			[3]int{boolRank(sm.Task != t.Task), round[sm.Model], boolRank(sm.Model == t.Model)}})
		round[sm.Model]++
	}
	// Stable: the page is in id order, which stays the order of equals.
	slices.SortStableFunc(others, func(x, y ranked) int { return slices.Compare(x.rank[:], y.rank[:]) })
	out := make([]compareOther, 0, othersShown)
	for _, o := range others[:min(len(others), othersShown)] {
		out = append(out, o.compareOther)
	}
	return out, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func newCompareView(a, b *trace.Trace) compareView {
	c := compare.Compare(a, b)
	inB, inA := map[string]bool{}, map[string]bool{}
	for _, m := range c.Modes {
		inA[m.Mode], inB[m.Mode] = m.A, m.B
	}
	v := compareView{A: newCompareSide(c.A, a, inB), B: newCompareSide(c.B, b, inA), Counts: c.Counts}
	for _, r := range c.Rows {
		v.Rows = append(v.Rows, compareRow{Row: r, A: newCompareCell(a, r.A), B: newCompareCell(b, r.B)})
	}
	return v
}

func newCompareSide(side compare.Side, t *trace.Trace, other map[string]bool) compareSide {
	cs := compareSide{Side: side, Task: report.TaskTitle(t.Task, 160), Result: store.OutcomeClass(side.Outcome), Outcome: report.OutcomeText(side.Outcome)}
	if side.Duration > 0 {
		cs.Duration = side.Duration.Round(time.Second).String()
	}
	for _, sm := range side.Modes {
		src := compareSource{Source: sm.Source}
		for _, m := range sm.Modes {
			src.Modes = append(src.Modes, compareMode{Code: m, Only: !other[m]})
		}
		cs.Modes = append(cs.Modes, src)
	}
	return cs
}

func newCompareCell(t *trace.Trace, c *compare.Cell) *compareCell {
	if c == nil {
		return nil
	}
	cell := &compareCell{Cell: c, Label: trace.Clip(c.Label, noteLength), TraceID: t.ID, At: c.Steps[0]}
	if c.Call != nil {
		cell.At = *c.Call
	}
	for _, i := range c.Steps {
		st := &t.Steps[i]
		if st.Kind == trace.KindToolCall || st.Kind == trace.KindToolResult {
			continue
		}
		if text := trace.NormalizeSpace(st.Text); text != "" {
			cell.Notes = append(cell.Notes, compareNote{Index: i, Kind: report.KindLabel(st), Text: trace.Clip(text, noteLength)})
		}
	}
	return cell
}
