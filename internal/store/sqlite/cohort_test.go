package sqlite

import (
	"context"
	"reflect"
	"testing"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

func TestLoadCohort(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	yes, no := true, false
	one, half := 1.0, 0.5
	a := &trace.Trace{ID: "a", Format: "codex", Model: "m1", Scenario: "s1", Task: "a long task prompt that the cohort never reads"}
	a.Append(trace.Step{Kind: trace.KindMessage, Text: "x"})
	a.Findings = []trace.Finding{
		{Mode: "FM-1.3", Source: "judge:x", Verdict: trace.Present, Steps: []int{7, 2}},
		{Mode: "FM-1.3", Source: "human:ann", Verdict: trace.Present, Steps: []int{4}},
		{Mode: "FM-1.3", Source: "human:ann", Verdict: trace.Present, Steps: []int{3}},
		{Mode: "FM-3.3", Source: "judge:x", Verdict: trace.Present},
		{Mode: "FM-2.6", Source: "judge:x", Verdict: trace.Absent, Steps: []int{1}},
		{Mode: "SYS-1", Source: "judge:x", Verdict: trace.Present, Steps: []int{0}},
		{Mode: "", Source: "mad:annotator_1", Verdict: trace.Present, RawLabel: "unmapped"},
	}
	// The labels outcome outranks the scorer's.
	a.Outcomes = []trace.Outcome{{Source: "itbench", Metric: "root_cause_recall", Score: &half, Success: &no}, {Source: "labels", Score: &one, Success: &yes}}
	b := &trace.Trace{ID: "b", Format: "codex", Model: "m2"}
	b.Append(trace.Step{Kind: trace.KindMessage, Text: "y"})
	c := &trace.Trace{ID: "c", Format: "codex", Model: "m1"}
	c.Append(trace.Step{Kind: trace.KindMessage, Text: "z"})
	c.Findings = []trace.Finding{{Mode: "FM-1.3", Source: "human:ann", Verdict: trace.Present}}
	ingestFile(t, st, "/f", "h", a, b, c)
	if err := st.ReplaceFindings(ctx, "b", "detector", nil, "v1"); err != nil {
		t.Fatal(err)
	}

	var marks []store.Mark
	collect := func(m store.Mark) { marks = append(marks, m) }
	all, err := st.LoadCohort(ctx, nil, nil, collect)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Traces) != 3 || all.ID(&all.Traces[0]) != "a" || all.ID(&all.Traces[2]) != "c" {
		t.Fatalf("traces = %+v", all.Traces)
	}
	if ta := &all.Traces[0]; all.Text(ta.Model) != "m1" || all.Text(ta.Scenario) != "s1" || all.Outcome(ta) == nil || all.Outcome(ta).Source != "labels" || ta.Detected {
		t.Errorf("trace a = %+v, outcome %+v", ta, all.Outcome(ta))
	}
	if tb := &all.Traces[1]; all.Outcome(tb) != nil || !tb.Detected {
		t.Errorf("trace b = %+v", tb)
	}
	if want := []string{"human:ann", "judge:x", "mad:annotator_1"}; !reflect.DeepEqual(all.Sources, want) {
		t.Errorf("sources = %v, want %v", all.Sources, want)
	}
	// a: human, judge and mad; c: human.
	wantAnn := []store.Annotation{{Trace: 0, Source: 0}, {Trace: 0, Source: 1}, {Trace: 0, Source: 2}, {Trace: 2, Source: 0}}
	if !reflect.DeepEqual(all.Annotations, wantAnn) {
		t.Errorf("annotations = %v, want %v", all.Annotations, wantAnn)
	}
	// Each present finding with a mode is a mark at its first cited step:
	// FM-1.3 on a three times (the judge cites 7 first, the human 4, then
	// 3), FM-3.3 unlocated; FM-2.6 is absent and the unmapped label has no
	// mode.
	wantMarks := []store.Mark{{Trace: 0, Step: 7, Mode: "FM-1.3"}, {Trace: 0, Step: 4, Mode: "FM-1.3"}, {Trace: 0, Step: 3, Mode: "FM-1.3"}, {Trace: 0, Step: -1, Mode: "FM-3.3"}, {Trace: 0, Step: 0, Mode: "SYS-1"}, {Trace: 2, Step: -1, Mode: "FM-1.3"}}
	if !reflect.DeepEqual(marks, wantMarks) {
		t.Errorf("marks = %v\nwant %v", marks, wantMarks)
	}

	// Selecting a source and a subset of traces.
	marks = nil
	some, err := st.LoadCohort(ctx, []string{"c", "a"}, []string{"judge"}, collect)
	if err != nil {
		t.Fatal(err)
	}
	if len(some.Traces) != 2 || some.ID(&some.Traces[0]) != "a" || some.ID(&some.Traces[1]) != "c" {
		t.Fatalf("selected traces = %+v", some.Traces)
	}
	wantMarks = []store.Mark{{Trace: 0, Step: 7, Mode: "FM-1.3"}, {Trace: 0, Step: -1, Mode: "FM-3.3"}, {Trace: 0, Step: 0, Mode: "SYS-1"}}
	if !reflect.DeepEqual(marks, wantMarks) {
		t.Errorf("judge marks = %v\nwant %v", marks, wantMarks)
	}
	marks = nil
	none, err := st.LoadCohort(ctx, []string{}, nil, collect)
	if err != nil || len(none.Traces) != 0 || len(marks) != 0 {
		t.Errorf("empty selection: %+v, %v", none, err)
	}
}

func TestLeadingStep(t *testing.T) {
	for in, want := range map[string]int32{"[12,4]": 12, "[]": -1, " [ 3 ]": 3, "[0]": 0, "{}": -1, "": -1, "[-1]": -1, "[12345678901]": -1} {
		if got := leadingStep(in); got != want {
			t.Errorf("leadingStep(%q) = %d, want %d", in, got, want)
		}
	}
}
