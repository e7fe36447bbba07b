package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/faultline/faultline/internal/store"
)

func ids(traces []store.Summary) []string {
	out := []string{}
	for _, t := range traces {
		out = append(out, t.ID)
	}
	return out
}

// TestListFilters selects traces with each filter the commands take.
func TestListFilters(t *testing.T, open Opener) {
	ctx := context.Background()
	st := openFilled(t, open)
	for _, tc := range []struct {
		name string
		f    store.Filter
		want []string
	}{
		{"all, by model then id", store.Filter{}, []string{"trace-a", "trace-c", "trace-d", "trace-b"}},
		{"model by canonical name", store.Filter{Model: []string{"m1"}}, []string{"trace-a", "trace-b"}},
		{"model as aliased", store.Filter{Model: []string{"mine"}, Aliases: store.ModelAliases{"m2": "mine"}}, []string{"trace-c", "trace-d"}},
		{"system", store.Filter{System: []string{"other"}}, []string{"trace-c", "trace-d"}},
		{"empty list keeps none", store.Filter{System: []string{}}, []string{}},
		{"format", store.Filter{Format: []string{"codex"}}, []string{"trace-a", "trace-c", "trace-d", "trace-b"}},
		{"success", store.Filter{Outcome: "success"}, []string{"trace-a"}},
		{"failure (labels before format)", store.Filter{Outcome: "failure"}, []string{"trace-c"}},
		{"unknown", store.Filter{Outcome: "unknown"}, []string{"trace-d", "trace-b"}},
		{"source by prefix", store.Filter{Sources: []string{"judge"}}, []string{"trace-a", "trace-c"}},
		{"detector silence counts", store.Filter{Sources: []string{"detector"}}, []string{"trace-a", "trace-c", "trace-d"}},
		{"source not a prefix of a word", store.Filter{Sources: []string{"mad:annotator"}}, []string{}},
		{"mode", store.Filter{Modes: []string{"FM-1.3"}}, []string{"trace-a"}},
		{"mode of a source", store.Filter{Modes: []string{"FM-1.3"}, Sources: []string{"human"}}, []string{}},
		{"modes together", store.Filter{Modes: []string{"FM-1.3", "FM-3.3"}}, []string{"trace-a"}},
		{"search", store.Filter{Search: "kubectl"}, []string{"trace-a"}},
		{"path of the file", store.Filter{Paths: []string{"/data/run/cohort.jsonl"}}, []string{"trace-a", "trace-c", "trace-d", "trace-b"}},
		{"path of its directory", store.Filter{Paths: []string{"/data/run/"}}, []string{"trace-a", "trace-c", "trace-d", "trace-b"}},
		{"path of another", store.Filter{Paths: []string{"/data/ru"}}, []string{}},
		{"selection by id", store.Filter{Select: &store.Selection{IDs: []string{"trace-b", "trace-c"}}}, []string{"trace-c", "trace-b"}},
		{"selection by file", store.Filter{Select: &store.Selection{Files: []string{"/data/run/cohort.jsonl"}}}, []string{"trace-a", "trace-c", "trace-d", "trace-b"}},
		{"empty selection", store.Filter{Select: &store.Selection{}}, []string{}},
		{"limit", store.Filter{Limit: 2}, []string{"trace-a", "trace-c"}},
	} {
		got, err := st.List(ctx, tc.f)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(ids(got), tc.want) {
			t.Errorf("%s: List = %v, want %v", tc.name, ids(got), tc.want)
		}
	}
	all, err := st.List(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	a := all[0]
	if a.Steps != 8 || a.Task != "find the root cause" || a.Format != "codex" || a.Source != "/data/run/cohort.jsonl#trace-a" ||
		a.Outcome == nil || a.Outcome.Source != "itbench" || len(a.Outcomes) != 1 {
		t.Errorf("List summary = %+v", a)
	}
	if c := all[1]; c.Outcome == nil || c.Outcome.Source != "labels" || len(c.Outcomes) != 2 {
		t.Errorf("List summary of trace-c = %+v", c)
	}
	if _, err := st.List(ctx, store.Filter{Outcome: "maybe"}); err == nil {
		t.Error("List(outcome maybe) did not fail")
	}
	if _, err := st.List(ctx, store.Filter{Search: " * "}); !errors.Is(err, store.ErrEmptySearch) {
		t.Errorf("List(search of no word) = %v, want ErrEmptySearch", err)
	}
	for field, want := range map[string][]string{
		"model": {"m1", "m2", "openai/m1"}, "system": {"itbench-zero", "other"}, "scenario": {"2"}, "format": {"codex"},
	} {
		got, err := st.Values(ctx, field)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Values(%s) = %v, %v; want %v", field, got, err, want)
		}
	}
	if _, err := st.Values(ctx, "task"); err == nil {
		t.Error("Values(task) did not fail")
	}
}

// TestBrowse pages through traces in each order, both ways.
func TestBrowse(t *testing.T, open Opener) {
	ctx := context.Background()
	st := openFilled(t, open)
	for _, tc := range []struct {
		sort string
		desc bool
		want []string
	}{
		{"", false, []string{"trace-a", "trace-b", "trace-c", "trace-d"}},
		{"id", true, []string{"trace-d", "trace-c", "trace-b", "trace-a"}},
		{"model", false, []string{"trace-a", "trace-c", "trace-d", "trace-b"}},
		{"started", false, []string{"trace-d", "trace-c", "trace-a", "trace-b"}},
		{"steps", true, []string{"trace-a", "trace-c", "trace-b", "trace-d"}},
		{"steps", false, []string{"trace-d", "trace-b", "trace-c", "trace-a"}},
	} {
		// Forwards two at a time, then back from the last page.
		var got []string
		q := store.TraceQuery{Sort: tc.sort, Desc: tc.desc, Limit: 2}
		var pages []*store.Page
		for {
			p, err := st.Browse(ctx, q)
			if err != nil {
				t.Fatalf("Browse(%+v): %v", q, err)
			}
			pages = append(pages, p)
			got = append(got, ids(p.Traces)...)
			if p.Next == "" {
				break
			}
			q.After = p.Next
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Browse by %q desc=%v = %v, want %v", tc.sort, tc.desc, got, tc.want)
		}
		last := pages[len(pages)-1]
		if last.Prev == "" {
			t.Errorf("Browse by %q: the last page has no previous page", tc.sort)
			continue
		}
		back, err := st.Browse(ctx, store.TraceQuery{Sort: tc.sort, Desc: tc.desc, Limit: 2, Before: last.Prev})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ids(back.Traces), ids(pages[0].Traces)) || back.Prev != "" || back.Next == "" {
			t.Errorf("Browse by %q back = %v (prev %q), want %v", tc.sort, ids(back.Traces), back.Prev, ids(pages[0].Traces))
		}
	}
	p, err := st.Browse(ctx, store.TraceQuery{Outcome: "success"})
	if err != nil || len(p.Traces) != 1 || p.Traces[0].Outcome == nil || p.Traces[0].Started.IsZero() {
		t.Errorf("Browse(success) = %+v, %v", p, err)
	}
	for _, q := range []store.TraceQuery{{After: "nonsense"}, {After: "WyJhIl0", Before: "WyJhIl0"}, {Sort: "task"}} {
		if _, err := st.Browse(ctx, q); err == nil {
			t.Errorf("Browse(%+v) did not fail", q)
		}
	}
	if _, err := st.Browse(ctx, store.TraceQuery{After: "nonsense"}); !errors.Is(err, store.ErrBadCursor) {
		t.Errorf("Browse(bad cursor) = %v, want ErrBadCursor", err)
	}
	zero, two := 0, 2
	for _, tc := range []struct {
		q    store.TraceQuery
		want []string
	}{
		{store.TraceQuery{}, []string{"trace-a", "trace-b", "trace-c", "trace-d"}},
		{store.TraceQuery{ModeCount: &two}, []string{"trace-a"}},
		{store.TraceQuery{ModeCount: &zero}, []string{"trace-c", "trace-d"}},
		{store.TraceQuery{ModeCount: &zero, Sources: []string{"judge"}}, []string{"trace-c"}},
		{store.TraceQuery{Unlabelled: "human:ann"}, []string{"trace-b", "trace-c", "trace-d"}},
		{store.TraceQuery{Model: []string{"m1"}, Search: "step"}, []string{"trace-a", "trace-b"}},
	} {
		got, err := st.IDs(ctx, tc.q)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("IDs(%+v) = %v, %v; want %v", tc.q, got, err, tc.want)
		}
		n, err := st.Count(ctx, tc.q)
		if err != nil || n != len(tc.want) {
			t.Errorf("Count(%+v) = %d, %v; want %d", tc.q, n, err, len(tc.want))
		}
	}
}
