package sqlite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// browseStore holds 23 traces over three models, with outcomes and
// findings of two sources, for the paging and filter tests.
func browseStore(t *testing.T) *Store {
	t.Helper()
	st := open(t)
	var traces []*trace.Trace
	for i := range 23 {
		model := []string{"m1", "m2", ""}[i%3]
		tr := &trace.Trace{ID: fmt.Sprintf("t%02d", i), Format: "codex", Source: "x", Model: model, System: "sys", Scenario: fmt.Sprint(i % 4)}
		for k := range i%5 + 1 {
			tr.Append(trace.Step{Kind: trace.KindMessage, Role: "user", Text: fmt.Sprintf("step %d of trace %d", k, i)})
		}
		yes, no := true, false
		switch i % 4 {
		case 0:
			tr.Outcomes = []trace.Outcome{{Source: "itbench", Success: &yes}}
		case 1:
			// The labels outcome outranks the scorer's.
			tr.Outcomes = []trace.Outcome{{Source: "itbench", Success: &yes}, {Source: "labels", Success: &no}}
		case 2:
			tr.Outcomes = []trace.Outcome{{Source: "format", Success: &no}}
		}
		if i%2 == 0 {
			tr.Findings = append(tr.Findings, trace.Finding{Mode: "FM-1.3", Source: "judge:x", Verdict: trace.Present, Steps: []int{0}})
		}
		if i%3 == 0 {
			tr.Findings = append(tr.Findings, trace.Finding{Mode: "FM-3.3", Source: "human:ann", Verdict: trace.Present},
				trace.Finding{Mode: "FM-1.3", Source: "human:ann", Verdict: trace.Absent})
		}
		traces = append(traces, tr)
	}
	ingestFile(t, st, "/f", "h", traces...)
	return st
}

func ids(p *store.Page) string {
	var out []string
	for _, s := range p.Traces {
		out = append(out, s.ID)
	}
	return strings.Join(out, " ")
}

func TestBrowseFilters(t *testing.T) {
	ctx := context.Background()
	st := browseStore(t)
	zero, two := 0, 2
	tests := []struct {
		name string
		q    store.TraceQuery
		want string
	}{
		{"all", store.TraceQuery{}, "t00 t01 t02 t03 t04 t05 t06 t07 t08 t09 t10 t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 t21 t22"},
		{"model", store.TraceQuery{Model: []string{"m2"}}, "t01 t04 t07 t10 t13 t16 t19 t22"},
		{"empty model", store.TraceQuery{Model: []string{""}}, "t02 t05 t08 t11 t14 t17 t20"},
		{"scenario and model", store.TraceQuery{Scenario: []string{"1"}, Model: []string{"m2"}}, "t01 t13"},
		{"success", store.TraceQuery{Outcome: "success"}, "t00 t04 t08 t12 t16 t20"},
		// Traces with i%4 == 1 succeeded by the scorer and failed by the labels.
		{"failure", store.TraceQuery{Outcome: "failure"}, "t01 t02 t05 t06 t09 t10 t13 t14 t17 t18 t21 t22"},
		{"unknown", store.TraceQuery{Outcome: "unknown"}, "t03 t07 t11 t15 t19"},
		{"mode", store.TraceQuery{Modes: []string{"FM-3.3"}}, "t00 t03 t06 t09 t12 t15 t18 t21"},
		{"two modes", store.TraceQuery{Modes: []string{"FM-3.3", "FM-1.3"}}, "t00 t06 t12 t18"},
		// human:ann says FM-1.3 is absent: only the judge marks it present.
		{"mode by a source", store.TraceQuery{Modes: []string{"FM-1.3"}, Sources: []string{"human"}}, ""},
		{"mode by a source prefix", store.TraceQuery{Modes: []string{"FM-1.3"}, Sources: []string{"judge"}, Outcome: "success"}, "t00 t04 t08 t12 t16 t20"},
		{"two distinct modes", store.TraceQuery{ModeCount: &two}, "t00 t06 t12 t18"},
		{"no mode", store.TraceQuery{ModeCount: &zero, Outcome: "unknown"}, "t07 t11 t19"},
		{"unlabelled", store.TraceQuery{Unlabelled: "judge:x", Model: []string{"m1"}}, "t03 t09 t15 t21"},
		{"annotated by a source", store.TraceQuery{Sources: []string{"human"}}, "t00 t03 t06 t09 t12 t15 t18 t21"},
		{"model under a provider's name", store.TraceQuery{Model: []string{"openai/m2"}}, "t01 t04 t07 t10 t13 t16 t19 t22"},
		{"model by the alias table", store.TraceQuery{Model: []string{"big"}, Aliases: store.ModelAliases{"m1": "big"}}, "t00 t03 t06 t09 t12 t15 t18 t21"},
		{"search", store.TraceQuery{Search: "trace 17"}, "t17"},
		{"search a word of later steps", store.TraceQuery{Search: `"step 4"`}, "t04 t09 t14 t19"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.q.Limit = 100
			p, err := st.Browse(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(p); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			n, err := st.Count(ctx, tc.q)
			if err != nil || n != len(p.Traces) {
				t.Errorf("count %d, %v; listed %d", n, err, len(p.Traces))
			}
			all, err := st.IDs(ctx, tc.q)
			if err != nil || strings.Join(all, " ") != tc.want {
				t.Errorf("ids %v, %v", all, err)
			}
		})
	}
}

// Paging forwards and back through every sort order visits every trace
// once, in order, whatever the page size.
func TestBrowsePaging(t *testing.T) {
	ctx := context.Background()
	st := browseStore(t)
	for _, sort := range store.SortOrders {
		for _, desc := range []bool{false, true} {
			q := store.TraceQuery{Sort: sort, Desc: desc, Limit: 5}
			all, err := st.Browse(ctx, store.TraceQuery{Sort: sort, Desc: desc, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			var pages []string
			var seen []string
			p, err := st.Browse(ctx, q)
			for {
				if err != nil {
					t.Fatal(err)
				}
				pages = append(pages, ids(p))
				for _, s := range p.Traces {
					seen = append(seen, s.ID)
				}
				if p.Next == "" {
					break
				}
				q.After = p.Next
				p, err = st.Browse(ctx, q)
			}
			if got, want := strings.Join(seen, " "), ids(all); got != want {
				t.Errorf("%s desc=%v: forwards %s\nwant %s", sort, desc, got, want)
			}
			if len(pages) != 5 {
				t.Errorf("%s: %d pages", sort, len(pages))
			}
			// And back from the last page.
			q.After = ""
			for i := len(pages) - 2; i >= 0; i-- {
				if p.Prev == "" {
					t.Fatalf("%s: no previous page before page %d", sort, i+1)
				}
				q.Before = p.Prev
				if p, err = st.Browse(ctx, q); err != nil {
					t.Fatal(err)
				}
				if ids(p) != pages[i] {
					t.Errorf("%s desc=%v: back to page %d: %s, want %s", sort, desc, i, ids(p), pages[i])
				}
			}
			if p.Prev != "" {
				t.Errorf("%s: the first page has a previous one", sort)
			}
		}
	}
	if _, err := st.Browse(ctx, store.TraceQuery{After: "bm90IGpzb24"}); !errors.Is(err, store.ErrBadCursor) {
		t.Errorf("bad cursor: %v", err)
	}
	if _, err := st.Browse(ctx, store.TraceQuery{Sort: "colour"}); err == nil {
		t.Error("unknown sort order accepted")
	}
}

// The SQL source selection selects what MatchSource does.
func TestSourceConditionMatchesMatchSource(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	sources := []string{"detector", "judge:gpt", "judge:gpt:mini", "judgement", "human:ann", "human:bob", "mad:annotator_1", "x%y", "x_y:z"}
	for _, sel := range [][]string{nil, {"judge"}, {"judge:gpt"}, {"human:ann", "detector"}, {"x%y"}, {"x_y"}, {"x"}} {
		cond, args := sourceCondition("s", sel)
		var got []string
		for _, src := range sources {
			var n int
			if err := st.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT ? AS s) WHERE 1`+cond, append([]any{src}, args...)...).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == 1 {
				got = append(got, src)
			}
		}
		var want []string
		for _, src := range sources {
			if store.MatchSource(src, sel) {
				want = append(want, src)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v: SQL selects %v, store.MatchSource %v", sel, got, want)
		}
	}
}

func TestTracesAnnotatedBy(t *testing.T) {
	ctx := context.Background()
	st := browseStore(t)
	for _, tc := range []struct {
		sources []string
		want    string
	}{
		{[]string{"judge:x"}, "[t00 t02 t04 t06 t08 t10 t12 t14 t16 t18 t20 t22]"},
		{[]string{"human"}, "[t00 t03 t06 t09 t12 t15 t18 t21]"},
		{[]string{"judge", "human:ann"}, "[t00 t06 t12 t18]"},
		{[]string{"human:ann", "judge:x"}, "[t00 t06 t12 t18]"},
		{[]string{"human:bob", "judge:x"}, "[]"},
	} {
		// From the findings of the smaller source, and, once every source
		// has findings enough, from the summaries.
		for _, enough := range []int{50_000, 1} {
			annotatedEnough = enough
			got, err := st.TracesAnnotatedBy(ctx, tc.sources)
			if err != nil || fmt.Sprint(got) != tc.want {
				t.Errorf("%v, counting up to %d: %v, %v; want %s", tc.sources, enough, got, err, tc.want)
			}
		}
	}
	annotatedEnough = 50_000
}

func TestValuesAndSources(t *testing.T) {
	ctx := context.Background()
	st := browseStore(t)
	models, err := st.Values(ctx, "model")
	if err != nil || strings.Join(models, ",") != ",m1,m2" {
		t.Errorf("models %q, %v", models, err)
	}
	sources, err := st.AllSources(ctx)
	if err != nil || strings.Join(sources, ",") != "human:ann,judge:x" {
		t.Errorf("sources %q, %v", sources, err)
	}
	if _, err := st.Values(ctx, "task"); err == nil {
		t.Error("a field not offered")
	}
}

func TestStepRange(t *testing.T) {
	ctx := context.Background()
	st := browseStore(t)
	tr, n, err := st.LoadHeader(ctx, "t04")
	if err != nil || n != 5 || tr.Steps != nil || len(tr.Outcomes) != 1 || len(tr.Findings) != 1 {
		t.Fatalf("header %+v, %d steps, %v", tr, n, err)
	}
	steps, err := st.StepRange(ctx, "t04", 1, 3)
	if err != nil || len(steps) != 2 || steps[0].Index != 1 || steps[1].Text != "step 2 of trace 4" {
		t.Errorf("range %+v, %v", steps, err)
	}
	steps, err = st.StepsAt(ctx, "t04", []int{4, 0, 99})
	if err != nil || len(steps) != 2 || steps[0].Index != 0 || steps[1].Index != 4 {
		t.Errorf("at %+v, %v", steps, err)
	}
}
