package memory

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/store/sqlite"
	"github.com/faultline/faultline/internal/store/storetest"
	"github.com/faultline/faultline/trace"
)

// conformanceTraces is a small cohort with what the readers tell apart:
// several sources (one silent detector run, a judge, a labeller, MAD
// annotators), located and unlocated findings, absent and unmapped ones,
// decided, undecided and missing outcomes.
func conformanceTraces() []*trace.Trace {
	yes, no := true, false
	one := 1.0
	mk := func(id, model string, detected string, outcomes []trace.Outcome, fs ...trace.Finding) *trace.Trace {
		t := &trace.Trace{ID: id, Format: "codex", Model: model, System: "itbench-zero", Scenario: "2", DetectedWith: detected, Outcomes: outcomes}
		for range 8 {
			t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant, Text: "x"})
		}
		t.Findings = fs
		return t
	}
	f := func(src, mode string, v trace.Verdict, steps ...int) trace.Finding {
		return trace.Finding{Source: src, Mode: mode, Verdict: v, Steps: steps}
	}
	return []*trace.Trace{
		mk("a", "m1", "r1", []trace.Outcome{{Source: "itbench", Metric: "root_cause_recall", Score: &one, Success: &yes}},
			f("detector", "FM-1.3", trace.Present, 4, 2), f("judge:x", "FM-1.3", trace.Present, 7), f("judge:x", "FM-2.6", trace.Absent),
			f("human:ann", "FM-3.3", trace.Present)),
		mk("b", "m1", "", []trace.Outcome{{Source: "itbench", Metric: "root_cause_recall", Detail: `{"status":"not a diagnosis","problem":"a remediation task"}`}},
			f("mad:annotator_1", "FM-1.1", trace.Present, 0), f("mad:annotator_2", "", trace.Present)),
		mk("c", "m2", "r1", []trace.Outcome{{Source: "labels", Success: &no}}, f("detector", "SYS-1", trace.Present, 3)),
		mk("d", "m2", "r1", nil),
	}
}

// TestConformsToSQLite holds the memory backend to the SQLite backend's
// answers on the same traces, for every reader the analysis packages use.
func TestConformsToSQLite(t *testing.T) {
	ctx := context.Background()
	sq, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	if _, err := ingest.StoreFile(ctx, sq, ingest.FileInfo{Path: "/c", Hash: "h"}, conformanceTraces()...); err != nil {
		t.Fatal(err)
	}
	mem := New(conformanceTraces()...)

	for _, sel := range []struct{ ids, sources []string }{
		{nil, nil}, {[]string{"c", "a", "zz"}, nil}, {nil, []string{"judge"}}, {[]string{"a", "b"}, []string{"mad", "human:ann"}},
	} {
		if got, want := storetest.CohortText(t, mem, sel.ids, sel.sources), storetest.CohortText(t, sq, sel.ids, sel.sources); got != want {
			t.Errorf("LoadCohort(%v, %v):\nmemory %s\nsqlite %s", sel.ids, sel.sources, got, want)
		}
	}

	for _, f := range []store.Filter{
		{}, {Model: []string{"m1"}}, {Model: []string{"openai/m2"}}, {Model: []string{"m2"}, Aliases: store.ModelAliases{"m1": "m2"}},
		{Model: []string{}}, {System: []string{"nope"}}, {Scenario: []string{"2"}}, {Format: []string{"codex", "mad"}},
		{Outcome: "success"}, {Outcome: "failure"}, {Outcome: "unknown"},
		{Sources: []string{"judge"}}, {Sources: []string{"detector"}}, {Sources: []string{"mad", "human:ann"}},
		{Modes: []string{"FM-1.3"}}, {Modes: []string{"FM-1.3"}, Sources: []string{"judge"}}, {Modes: []string{"FM-1.3", "FM-3.3"}},
		{Modes: []string{"SYS-1"}, Sources: []string{"detector"}}, {Modes: []string{"FM-2.6"}},
		{Select: &store.Selection{IDs: []string{"c", "a"}}}, {Limit: 1}, {Model: []string{"m2"}, Limit: 1},
	} {
		if got, want := listed(ctx, t, mem, f), listed(ctx, t, sq, f); got != want {
			t.Errorf("List(%+v):\nmemory %s\nsqlite %s", f, got, want)
		}
	}

	if got := listed(ctx, t, mem, store.Filter{Sources: []string{"detector"}}); got != "[am1itbench-zero2codex8success1 cm2itbench-zero2codex8failure1 dm2itbench-zero2codex8unknown0]" {
		t.Errorf("the detectors' traces: %s", got)
	}
	for _, f := range []store.Filter{{Paths: []string{"/c"}}, {Search: "x"}} {
		if _, err := mem.List(ctx, f); !errors.Is(err, errNoIndex) {
			t.Errorf("List(%+v): %v", f, err)
		}
	}

	ids := []string{"a", "b", "c", "d"}
	for _, r := range []struct {
		name     string
		mem, sql func() (any, error)
	}{
		{"Sources", func() (any, error) { return mem.Sources(ctx, ids) }, func() (any, error) { return sq.Sources(ctx, ids) }},
		{"DetectedWith", func() (any, error) { return mem.DetectedWith(ctx, ids) }, func() (any, error) { return sq.DetectedWith(ctx, ids) }},
		{"ModeVerdicts", func() (any, error) { return verdicts(ctx, mem, ids) }, func() (any, error) { return verdicts(ctx, sq, ids) }},
		{"Findings", func() (any, error) { return findings(ctx, mem, "a") }, func() (any, error) { return findings(ctx, sq, "a") }},
		{"EachFinding", func() (any, error) { return eachFinding(ctx, mem, []string{"c", "a", "zz"}) },
			func() (any, error) { return eachFinding(ctx, sq, []string{"c", "a", "zz"}) }},
		{"TraceVerdicts", func() (any, error) { return traceVerdicts(ctx, mem, ids) }, func() (any, error) { return traceVerdicts(ctx, sq, ids) }},
		{"TraceVerdicts(c, a, zz, a)", func() (any, error) { return traceVerdicts(ctx, mem, []string{"c", "a", "zz", "a"}) },
			func() (any, error) { return traceVerdicts(ctx, sq, []string{"c", "a", "zz", "a"}) }},
	} {
		got, err1 := r.mem()
		want, err2 := r.sql()
		if err1 != nil || err2 != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: memory %v (%v), sqlite %v (%v)", r.name, got, err1, want, err2)
		}
	}
}

type lister interface {
	List(ctx context.Context, f store.Filter) ([]store.Summary, error)
}

// listed prints what List says of each trace a filter keeps.
func listed(ctx context.Context, t *testing.T, l lister, f store.Filter) string {
	t.Helper()
	list, err := l.List(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list {
		out = append(out, fmt.Sprint(s.ID, s.Model, s.System, s.Scenario, s.Format, s.Steps, store.OutcomeClass(s.Outcome), len(s.Outcomes)))
	}
	return fmt.Sprint(out)
}

type verdictReader interface {
	ModeVerdicts(ctx context.Context, ids []string, sources []string, fn func(store.ModeVerdict) error) error
}

func verdicts(ctx context.Context, r verdictReader, ids []string) ([]string, error) {
	var out []string
	err := r.ModeVerdicts(ctx, ids, nil, func(v store.ModeVerdict) error {
		out = append(out, fmt.Sprint(v))
		return nil
	})
	slices.Sort(out)
	return out, err
}

type traceVerdictReader interface {
	TraceVerdicts(ctx context.Context, ids []string, fn func(store.TraceVerdicts) error) error
}

// traceVerdicts lists each trace's verdicts in the order they come.
func traceVerdicts(ctx context.Context, r traceVerdictReader, ids []string) ([]string, error) {
	var out []string
	err := r.TraceVerdicts(ctx, ids, func(t store.TraceVerdicts) error {
		out = append(out, fmt.Sprint(t))
		return nil
	})
	return out, err
}

type eachFindingReader interface {
	EachFinding(ctx context.Context, ids []string, q store.FindingQuery, fn func(store.TraceFinding) error) error
}

// eachFinding lists the detectors' findings on the traces in the order
// they come.
func eachFinding(ctx context.Context, r eachFindingReader, ids []string) ([]string, error) {
	var out []string
	err := r.EachFinding(ctx, ids, store.FindingQuery{Sources: []string{"detector"}}, func(f store.TraceFinding) error {
		out = append(out, fmt.Sprint(f))
		return nil
	})
	return out, err
}

type findingReader interface {
	Findings(ctx context.Context, traceID string) ([]trace.Finding, error)
}

// findings lists a trace's findings by source, mode and verdict, sorted.
func findings(ctx context.Context, r findingReader, id string) ([]string, error) {
	fs, err := r.Findings(ctx, id)
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprint(f.Source, f.Mode, f.Verdict, f.Steps))
	}
	slices.Sort(out)
	return out, err
}
