package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// TestWriteAndLoad stores the cohort and reads each trace back whole, and
// in parts.
func TestWriteAndLoad(t *testing.T, open Opener) {
	ctx := context.Background()
	st := openFilled(t, open)
	for _, want := range Cohort() {
		got, err := st.Load(ctx, want.ID)
		if err != nil {
			t.Fatalf("Load(%s): %v", want.ID, err)
		}
		if got.Source != want.Source || got.Model != want.Model || got.Task != want.Task || !got.Started.Equal(want.Started) ||
			got.Usage != want.Usage || !reflect.DeepEqual(got.Meta, want.Meta) || !reflect.DeepEqual(got.Diagnosis, want.Diagnosis) ||
			got.DetectedWith != want.DetectedWith {
			t.Errorf("Load(%s) = %+v, want %+v", want.ID, got, want)
		}
		if !reflect.DeepEqual(got.Steps, want.Steps) {
			t.Errorf("Load(%s) steps:\n got %+v\nwant %+v", want.ID, got.Steps, want.Steps)
		}
		if len(got.Findings) != len(want.Findings) {
			t.Errorf("Load(%s): %d findings, want %d", want.ID, len(got.Findings), len(want.Findings))
		}
		if len(got.Outcomes) != len(want.Outcomes) {
			t.Errorf("Load(%s): %d outcomes, want %d", want.ID, len(got.Outcomes), len(want.Outcomes))
		}
	}
	// Findings come ordered by their first step, unlocated ones as stored.
	fs, err := st.Findings(ctx, "trace-a")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, f := range fs {
		order = append(order, f.Source+" "+f.Mode)
	}
	if want := []string{"judge:x FM-2.6", "human:ann FM-3.3", "detector FM-1.3", "judge:x FM-1.3"}; !reflect.DeepEqual(order, want) {
		t.Errorf("Findings order = %q, want %q", order, want)
	}
	if fs[2].Quote != "step" || fs[2].Explanation != "because" || fs[2].Confidence != 0.75 || !reflect.DeepEqual(fs[2].Steps, []int{4, 2}) {
		t.Errorf("finding = %+v", fs[2])
	}

	h, n, err := st.LoadHeader(ctx, "trace-a")
	if err != nil || n != 8 || h.Steps != nil || len(h.Findings) != 4 {
		t.Errorf("LoadHeader = %d steps, %+v, %v", n, h, err)
	}
	if _, _, err := st.LoadHeader(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("LoadHeader(nope) = %v, want ErrNotFound", err)
	}
	for _, tc := range []struct {
		name string
		get  func() ([]trace.Step, error)
		want []int
	}{
		{"StepRange(2,5)", func() ([]trace.Step, error) { return st.StepRange(ctx, "trace-a", 2, 5) }, []int{2, 3, 4}},
		{"StepRange(-3,2)", func() ([]trace.Step, error) { return st.StepRange(ctx, "trace-a", -3, 2) }, []int{0, 1}},
		{"StepRange(6,100)", func() ([]trace.Step, error) { return st.StepRange(ctx, "trace-a", 6, 100) }, []int{6, 7}},
		{"StepRange(5,5)", func() ([]trace.Step, error) { return st.StepRange(ctx, "trace-a", 5, 5) }, nil},
		{"StepsAt", func() ([]trace.Step, error) { return st.StepsAt(ctx, "trace-a", []int{7, 4, 99, -1}) }, []int{4, 7}},
		{"StepsAt(unknown trace)", func() ([]trace.Step, error) { return st.StepsAt(ctx, "nope", []int{1}) }, nil},
	} {
		steps, err := tc.get()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []int
		for _, s := range steps {
			got = append(got, s.Index)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, got, tc.want)
		}
	}

	// Outcomes and findings written after ingest.
	score := 0.25
	if err := st.PutOutcome(ctx, "trace-d", trace.Outcome{Source: "itbench", Metric: "root_cause_recall", Score: &score, Success: new(bool)}); err != nil {
		t.Fatal(err)
	}
	if err := st.ReplaceFindings(ctx, "trace-d", "detector", []trace.Finding{{Source: "detector", Mode: "FM-2.3", Verdict: trace.Present, Steps: []int{1}}}, "r2"); err != nil {
		t.Fatal(err)
	}
	d, err := st.Load(ctx, "trace-d")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Outcomes) != 1 || *d.Outcomes[0].Score != 0.25 || *d.Outcomes[0].Success || d.DetectedWith != "r2" || len(d.Findings) != 1 {
		t.Errorf("after PutOutcome and ReplaceFindings: %+v", d)
	}
	with, err := st.DetectedWith(ctx, []string{"trace-a", "trace-b", "trace-d", "nope"})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"trace-a": "r1", "trace-b": "", "trace-d": "r2"}; !reflect.DeepEqual(with, want) {
		t.Errorf("DetectedWith = %v, want %v", with, want)
	}
}

// TestResolve finds traces by id and unique prefix.
func TestResolve(t *testing.T, open Opener) {
	ctx := context.Background()
	st := openFilled(t, open)
	extra := &trace.Trace{ID: "trace-a2", Format: "codex"}
	if _, err := ingest.StoreFile(ctx, st, ingest.FileInfo{Path: "/data/other.jsonl", Hash: "x"}, extra); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in, want string
		err      bool
	}{
		{"trace-a", "trace-a", false}, {"trace-a2", "trace-a2", false}, {"trace-c", "trace-c", false},
		{"trace-", "", true}, {"nope", "", true}, {"trace_", "", true}, {"%", "", true},
	} {
		got, err := st.Resolve(ctx, tc.in)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("Resolve(%q) = %q, %v", tc.in, got, err)
		}
	}
	if _, err := st.Resolve(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Resolve(nope) = %v, want ErrNotFound", err)
	}
}

// TestReingest stores a file again: unchanged, nothing happens; changed,
// its traces are replaced, keeping what was added to them in faultline.
func TestReingest(t *testing.T, open Opener) {
	ctx := context.Background()
	st := openFilled(t, open)
	info := ingest.FileInfo{Path: "/data/run/cohort.jsonl", Hash: "h1", Format: "codex"}
	sink, err := st.File(ctx, info)
	if err != nil || sink != nil {
		t.Fatalf("File(unchanged) = %v, %v; want nil, nil", sink, err)
	}
	// A label and a score added in faultline.
	if err := st.ReplaceFindings(ctx, "trace-c", "human:bob", []trace.Finding{
		{Source: "human:bob", Mode: "FM-1.1", Verdict: trace.Present, Steps: []int{1}},
		{Source: "human:bob", Mode: "FM-1.2", Verdict: trace.Present, Steps: []int{4}}, // cites a step the new version lacks
	}, ""); err != nil {
		t.Fatal(err)
	}
	if err := st.PutOutcome(ctx, "trace-c", trace.Outcome{Source: "itbench", Metric: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutJudgement(ctx, store.JudgeRecord{Trace: "trace-c", Source: "judge:x", Status: "ok"}, nil); err != nil {
		t.Fatal(err)
	}
	// The new version: trace-c a step shorter (allowed), with new detector
	// findings and no outcome of its own (its labels outcome stays, its
	// format one goes); trace-b and trace-d gone.
	changed := Cohort()
	c := changed[2]
	c.Steps = c.Steps[:4]
	c.Findings = []trace.Finding{{Source: "detector", Mode: "FM-3.1", Verdict: trace.Present, Steps: []int{0}}}
	c.Outcomes = nil
	st.ReplaceFewerSteps(func(ingest.FewerSteps) {})
	info.Hash = "h2"
	if _, err := ingest.StoreFile(ctx, st, info, changed[0], c); err != nil {
		t.Fatal(err)
	}
	ids, err := st.IDs(ctx, store.TraceQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"trace-a", "trace-c"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("after re-ingest: traces %v, want %v", ids, want)
	}
	got, err := st.Load(ctx, "trace-c")
	if err != nil {
		t.Fatal(err)
	}
	var findings, outcomes []string
	for _, f := range got.Findings {
		findings = append(findings, f.Source+" "+f.Mode)
	}
	for _, o := range got.Outcomes {
		outcomes = append(outcomes, o.Source)
	}
	if want := []string{"detector FM-3.1", "human:bob FM-1.1"}; !reflect.DeepEqual(findings, want) {
		t.Errorf("replaced trace's findings = %q, want %q", findings, want)
	}
	if want := []string{"itbench", "labels"}; !reflect.DeepEqual(outcomes, want) {
		t.Errorf("replaced trace's outcomes = %q, want %q", outcomes, want)
	}
	if len(got.Steps) != 4 {
		t.Errorf("replaced trace has %d steps, want 4", len(got.Steps))
	}
	if js, err := st.TraceJudgements(ctx, "trace-c"); err != nil || len(js) != 0 {
		t.Errorf("the replaced trace's judge records = %v, %v; want none", js, err)
	}
	if sink, err := st.File(ctx, info); err != nil || sink != nil {
		t.Errorf("File(after re-ingest) = %v, %v; want nil, nil", sink, err)
	}
}

// TestFewerSteps refuses a trace of fewer steps than the stored one,
// unless told to replace it, and then records the file for reading again.
func TestFewerSteps(t *testing.T, open Opener) {
	ctx := context.Background()
	st := openFilled(t, open)
	short := Cohort()[0]
	short.Steps = short.Steps[:2]
	info := ingest.FileInfo{Path: "/data/late.jsonl", Hash: "l1"}
	_, err := ingest.StoreFile(ctx, st, info, short)
	var fewer *ingest.FewerSteps
	if !errors.As(err, &fewer) || fewer.Stored != 8 || fewer.Incoming != 2 || fewer.StoredFrom != "/data/run/cohort.jsonl" {
		t.Fatalf("StoreFile(fewer steps) = %v, want a FewerSteps error", err)
	}
	if _, n, _ := st.LoadHeader(ctx, "trace-a"); n != 8 {
		t.Errorf("the refused trace replaced the stored one: %d steps", n)
	}
	if sink, err := st.File(ctx, info); err != nil || sink == nil {
		t.Errorf("a file with a refused trace was recorded as read")
	}
	var told []string
	st.ReplaceFewerSteps(func(f ingest.FewerSteps) { told = append(told, f.ID) })
	if _, err := ingest.StoreFile(ctx, st, info, short); err != nil {
		t.Fatal(err)
	}
	if _, n, _ := st.LoadHeader(ctx, "trace-a"); n != 2 || len(told) != 1 {
		t.Errorf("allowed replacement: %d steps, told %v", n, told)
	}
}
