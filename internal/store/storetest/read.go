package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// TestSearch finds steps by words, phrases and prefixes, as people type
// them, case and accents aside.
func TestSearch(t *testing.T, open Opener) {
	ctx := context.Background()
	st := openFilled(t, open)
	all := []string{"trace-a", "trace-b", "trace-c", "trace-d", "nope"}
	for _, tc := range []struct {
		search string
		want   map[string]store.SearchHit
	}{
		{"kubectl", map[string]store.SearchHit{"trace-a": {Steps: []int{3}, Count: 1}}},
		{"KUBECTL cafe", map[string]store.SearchHit{"trace-a": {Steps: []int{3}, Count: 1}}},
		{"café", map[string]store.SearchHit{"trace-a": {Steps: []int{3}, Count: 1}}},
		{"agent_output.json", map[string]store.SearchHit{"trace-a": {Steps: []int{4}, Count: 1}}},
		{`"output json"`, map[string]store.SearchHit{"trace-a": {Steps: []int{4}, Count: 1}}},
		{`"json output"`, map[string]store.SearchHit{}},
		{"kube*", map[string]store.SearchHit{"trace-a": {Steps: []int{3}, Count: 1}}},
		{"kube", map[string]store.SearchHit{}},
		{"shell", map[string]store.SearchHit{"trace-a": {Steps: []int{3, 4}, Count: 2}}},
		{"kubectl error", map[string]store.SearchHit{}}, // in two steps, never one
		{"looking step", map[string]store.SearchHit{
			"trace-a": {Steps: []int{0, 1, 2, 5, 6}, Count: 6}, "trace-b": {Steps: []int{0, 1, 2}, Count: 3},
			"trace-c": {Steps: []int{0, 1, 2, 3, 4}, Count: 5}, "trace-d": {Steps: []int{0, 1}, Count: 2}}},
		{`NEAR(kubectl) OR "x`, map[string]store.SearchHit{}},
		{`kubectl's \logs\ 'café`, map[string]store.SearchHit{}}, // "s" is a word of its own, in no step
		{`'kubectl' \logs\ 'café`, map[string]store.SearchHit{"trace-a": {Steps: []int{3}, Count: 1}}},
	} {
		got, err := st.SearchHits(ctx, tc.search, all)
		if err != nil {
			t.Errorf("SearchHits(%q): %v", tc.search, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SearchHits(%q) = %v, want %v", tc.search, got, tc.want)
		}
	}
	if got, err := st.SearchHits(ctx, "kubectl", []string{"trace-b"}); err != nil || len(got) != 0 {
		t.Errorf("SearchHits on other traces = %v, %v", got, err)
	}
	if _, err := st.SearchHits(ctx, `" "`, all); !errors.Is(err, store.ErrEmptySearch) {
		t.Errorf("SearchHits(no word) = %v, want ErrEmptySearch", err)
	}
}

// CohortLoader is the cohort reader of a store, the one CohortText needs:
// the memory store, which is not a backend, has it too.
type CohortLoader interface {
	LoadCohort(ctx context.Context, ids []string, sources []string, mark func(store.Mark)) (*store.Cohort, error)
}

// CohortText writes the cohort of the traces and sources st loads, with its
// marks, as one comparable text.
func CohortText(t *testing.T, st CohortLoader, ids, sources []string) string {
	t.Helper()
	var marks []string
	c, err := st.LoadCohort(context.Background(), ids, sources, func(m store.Mark) { marks = append(marks, fmt.Sprint(m)) })
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(marks)
	var traces []string
	for i := range c.Traces {
		ct := &c.Traces[i]
		outcome := "none"
		if o := c.Outcome(ct); o != nil {
			outcome = fmt.Sprint(o.Source, " ", o.Metric, " ", *o.Success)
		}
		traces = append(traces, fmt.Sprintf("%s/%s/%s/%s/%s/%q/%v", c.ID(ct), c.Text(ct.Model), c.Text(ct.System), c.Text(ct.Scenario), outcome, c.Text(ct.Undecided), ct.Detected))
	}
	return fmt.Sprintf("traces %v\nsources %v\nannotations %v\nmarks %v", traces, c.Sources, c.Annotations, marks)
}

// TestCohort loads the report's cohort in bulk.
func TestCohort(t *testing.T, open Opener) {
	st := openFilled(t, open)
	for _, tc := range []struct {
		ids, sources []string
		want         string
	}{
		{nil, nil, `traces [trace-a/m1/itbench-zero/2/itbench root_cause_recall true/""/true trace-b/openai/m1/itbench-zero/2/none/"not a diagnosis"/false trace-c/m2/other/2/labels  false/""/true trace-d/m2/other/2/none/""/true]
sources [detector human:ann judge:x mad:annotator_1 mad:annotator_2]
annotations [{0 0} {0 1} {0 2} {1 3} {1 4} {2 0} {2 2}]
marks [{0 -1 FM-3.3} {0 4 FM-1.3} {0 7 FM-1.3} {1 0 FM-1.1} {2 3 SYS-1}]`},
		{[]string{"trace-c", "trace-a"}, []string{"judge"}, `traces [trace-a/m1/itbench-zero/2/itbench root_cause_recall true/""/true trace-c/m2/other/2/labels  false/""/true]
sources [detector human:ann judge:x]
annotations [{0 0} {0 1} {0 2} {1 0} {1 2}]
marks [{0 7 FM-1.3}]`},
		{[]string{}, nil, "traces []\nsources []\nannotations []\nmarks []"},
	} {
		if got := CohortText(t, st, tc.ids, tc.sources); got != tc.want {
			t.Errorf("LoadCohort(%v, %v):\n got %s\nwant %s", tc.ids, tc.sources, got, tc.want)
		}
	}
}

// TestVerdicts reads findings as the comparison of sources (eval,
// agreement) does.
func TestVerdicts(t *testing.T, open Opener) {
	ctx := context.Background()
	st := openFilled(t, open)
	var got []string
	err := st.ModeVerdicts(ctx, []string{"trace-a", "trace-b", "trace-c"}, []string{"judge", "mad"}, func(v store.ModeVerdict) error {
		got = append(got, fmt.Sprint(v))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"{trace-a judge:x FM-1.3 present [7]}", "{trace-a judge:x FM-2.6 absent []}", "{trace-b mad:annotator_1 FM-1.1 present [0]}",
		"{trace-c judge:x FM-1.3 absent []}"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ModeVerdicts = %q, want %q", got, want)
	}
	got = nil
	err = st.TraceVerdicts(ctx, nil, func(v store.TraceVerdicts) error {
		got = append(got, fmt.Sprint(v))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"{trace-a r1 [detector judge:x human:ann] [{trace-a detector FM-1.3 present [4 2]} {trace-a judge:x FM-1.3 present [7]} {trace-a judge:x FM-2.6 absent []} {trace-a human:ann FM-3.3 present []}]}",
		"{trace-b  [mad:annotator_1 mad:annotator_2] [{trace-b mad:annotator_1 FM-1.1 present [0]}]}",
		"{trace-c r1 [detector judge:x] [{trace-c detector SYS-1 present [3]} {trace-c judge:x FM-1.3 absent []}]}",
		"{trace-d r1 [] []}",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("TraceVerdicts =\n%q\nwant\n%q", got, want)
	}
	for _, tc := range []struct {
		sources []string
		want    []string
	}{
		{[]string{"judge"}, []string{"trace-a", "trace-c"}},
		{[]string{"judge:x", "detector"}, []string{"trace-a", "trace-c"}},
		{[]string{"human", "judge"}, []string{"trace-a"}},
		{[]string{"mad", "judge"}, []string{}},
	} {
		got, err := st.TracesAnnotatedBy(ctx, tc.sources)
		if err != nil || !reflect.DeepEqual(nonNil(got), tc.want) {
			t.Errorf("TracesAnnotatedBy(%v) = %v, %v; want %v", tc.sources, got, err, tc.want)
		}
	}
	if _, err := st.TracesAnnotatedBy(ctx, nil); err == nil {
		t.Error("TracesAnnotatedBy(none) did not fail")
	}
	sources, err := st.Sources(ctx, []string{"trace-b", "trace-c"})
	if want := []string{"detector", "judge:x", "mad:annotator_1", "mad:annotator_2"}; err != nil || !reflect.DeepEqual(sources, want) {
		t.Errorf("Sources = %v, %v; want %v", sources, err, want)
	}
	all, err := st.AllSources(ctx)
	if want := []string{"detector", "human:ann", "judge:x", "mad:annotator_1", "mad:annotator_2"}; err != nil || !reflect.DeepEqual(all, want) {
		t.Errorf("AllSources = %v, %v; want %v", all, err, want)
	}
	for src, want := range map[string]bool{"judge:x": true, "mad:annotator_2": false, "nobody": false} {
		if got, err := st.DecidesModes(ctx, src); err != nil || got != want {
			t.Errorf("DecidesModes(%s) = %v, %v; want %v", src, got, err, want)
		}
	}
}

// TestEachFinding streams the findings of many traces at once, by source
// and by raw label, as eval reads a cohort's detector findings and
// decisive-error labels.
func TestEachFinding(t *testing.T, open Opener) {
	ctx := context.Background()
	st := openFilled(t, open)
	// The findings name their source, as every caller of ReplaceFindings
	// writes them.
	decisive := trace.Finding{Source: "human:ww", Verdict: trace.Present, Steps: []int{2}, RawLabel: "decisive error", Explanation: "a: wrong"}
	if err := st.ReplaceFindings(ctx, "trace-c", "human:ww", []trace.Finding{decisive, {Source: "human:ww", Mode: "FM-1.1", Verdict: trace.Absent, RawLabel: "other"}}, ""); err != nil {
		t.Fatal(err)
	}
	if err := st.ReplaceFindings(ctx, "trace-b", "human:ww", []trace.Finding{decisive}, ""); err != nil {
		t.Fatal(err)
	}
	det := trace.Finding{Source: "detector", Mode: "SYS-1", Verdict: trace.Present, Detector: "exit", Steps: []int{3}, Quote: "q", Confidence: 0.5, Explanation: "e", Taxonomy: "t"}
	if err := st.ReplaceFindings(ctx, "trace-c", "detector", []trace.Finding{det}, "r1"); err != nil {
		t.Fatal(err)
	}
	all := []string{"trace-d", "trace-c", "nope", "trace-b", "trace-a"}
	for _, tc := range []struct {
		name string
		ids  []string
		q    store.FindingQuery
		want []string
	}{
		{"by raw label", all, store.FindingQuery{RawLabel: "decisive error"}, []string{
			"trace-b human:ww  present  [2]  0 a: wrong  decisive error",
			"trace-c human:ww  present  [2]  0 a: wrong  decisive error"}},
		{"by raw label, some traces", []string{"trace-c"}, store.FindingQuery{RawLabel: "decisive error"}, []string{
			"trace-c human:ww  present  [2]  0 a: wrong  decisive error"}},
		{"by source", all, store.FindingQuery{Sources: []string{"detector"}}, []string{
			"trace-a detector FM-1.3 present  [4 2] step 0.75 because  ",
			"trace-c detector SYS-1 present exit [3] q 0.5 e t "}},
		{"by source prefix and raw label", all, store.FindingQuery{Sources: []string{"human"}, RawLabel: "other"}, []string{
			"trace-c human:ww FM-1.1 absent  []  0   other"}},
		{"every finding, in order", []string{"trace-c"}, store.FindingQuery{}, []string{
			"trace-c judge:x FM-1.3 absent  [] step 0.75 because  ",
			"trace-c human:ww  present  [2]  0 a: wrong  decisive error",
			"trace-c human:ww FM-1.1 absent  []  0   other",
			"trace-c detector SYS-1 present exit [3] q 0.5 e t "}},
		{"no traces", []string{}, store.FindingQuery{}, nil},
	} {
		var got []string
		err := st.EachFinding(ctx, tc.ids, tc.q, func(f store.TraceFinding) error {
			got = append(got, fmt.Sprint(f.Trace, " ", f.Source, " ", f.Mode, " ", f.Verdict, " ", f.Detector, " ", f.Steps, " ",
				f.Quote, " ", f.Confidence, " ", f.Explanation, " ", f.Taxonomy, " ", f.RawLabel))
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: EachFinding =\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestJudge stores judgements and cached answers and reads them back.
func TestJudge(t *testing.T, open Opener) {
	ctx := context.Background()
	st := openFilled(t, open)
	cost := 0.0125
	r := store.JudgeRecord{Trace: "trace-b", Source: "judge:y", PromptVersion: "v3", Status: "ok", Windows: 2, Samples: 3,
		Agreement: map[string]float64{"FM-1.1": 2.0 / 3}, Summary: "it looped", TaskSuccess: "failure", Calls: 4, InputTokens: 1000,
		OutputTokens: 200, Cost: &cost, JudgedAt: time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)}
	findings := []trace.Finding{{Source: "judge:y", Mode: "FM-1.1", Verdict: trace.Present, Steps: []int{1}, Quote: "step b"}}
	if err := st.PutJudgement(ctx, r, findings); err != nil {
		t.Fatal(err)
	}
	// Judged again: the record and findings are replaced, not added to.
	if err := st.PutJudgement(ctx, r, findings); err != nil {
		t.Fatal(err)
	}
	got, err := st.JudgeRecords(ctx, "judge:y", []string{"trace-a", "trace-b"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, map[string]store.JudgeRecord{"trace-b": r}) {
		t.Errorf("JudgeRecords = %+v, want %+v", got, r)
	}
	failed := store.JudgeRecord{Trace: "trace-b", Source: "judge:a", Status: "failed", Error: "timeout", JudgedAt: r.JudgedAt, Agreement: map[string]float64{}}
	if err := st.PutJudgement(ctx, failed, nil); err != nil {
		t.Fatal(err)
	}
	all, err := st.TraceJudgements(ctx, "trace-b")
	if err != nil || len(all) != 2 || all[0].Source != "judge:a" || all[0].Cost != nil || all[1].Source != "judge:y" {
		t.Errorf("TraceJudgements = %+v, %v", all, err)
	}
	fs, err := st.Findings(ctx, "trace-b")
	if err != nil || len(fs) != 3 {
		t.Errorf("findings after judging twice = %+v, %v", fs, err)
	}
	if e, err := st.CachedAnswer(ctx, "k1"); err != nil || e != nil {
		t.Errorf("CachedAnswer(missing) = %v, %v", e, err)
	}
	for _, content := range []string{"first", "second"} {
		if err := st.PutCachedAnswer(ctx, store.CacheEntry{Key: "k1", Model: "m", Content: content, InputTokens: 5, OutputTokens: 6}); err != nil {
			t.Fatal(err)
		}
	}
	if e, err := st.CachedAnswer(ctx, "k1"); err != nil || *e != (store.CacheEntry{Key: "k1", Model: "m", Content: "second", InputTokens: 5, OutputTokens: 6}) {
		t.Errorf("CachedAnswer = %+v, %v", e, err)
	}
}

// TestLabels writes a labeller's labels as findings and exports them.
func TestLabels(t *testing.T, open Opener) {
	ctx := context.Background()
	st := openFilled(t, open)
	for id, fs := range map[string][]trace.Finding{
		"trace-a": {{Source: "human:zoe", Mode: "FM-1.3", Verdict: trace.Present, Steps: []int{4}, Quote: "not found", Explanation: "missed it"},
			{Source: "human:zoe", Mode: "FM-1.1", Verdict: trace.Absent}},
		"trace-c": {{Source: "human:zoe", Mode: "FM-2.2", Verdict: trace.Unsure}, {Source: "human:zoe", Verdict: trace.Present, Steps: []int{1}}},
	} {
		if err := st.ReplaceFindings(ctx, id, "human:zoe", fs, ""); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.ExportLabels(ctx, "human:zoe")
	if err != nil {
		t.Fatal(err)
	}
	want := []labels.ModeLabel{
		{Trace: "trace-a", Mode: "FM-1.1", Verdict: trace.Absent},
		{Trace: "trace-a", Mode: "FM-1.3", Verdict: trace.Present, Steps: []int{4}, Quote: "not found", Note: "missed it"},
		{Trace: "trace-c", Mode: "FM-2.2", Verdict: trace.Unsure},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ExportLabels =\n%+v\nwant\n%+v", got, want)
	}
	if n, err := st.LabelledTraces(ctx, "human:zoe"); err != nil || n != 2 {
		t.Errorf("LabelledTraces = %d, %v; want 2", n, err)
	}
	if got, err := st.ExportLabels(ctx, "human:nobody"); err != nil || got == nil || len(got) != 0 {
		t.Errorf("ExportLabels(nobody) = %#v, %v; want an empty list", got, err)
	}
}

// TestRevision changes the revision with every write and only then.
func TestRevision(t *testing.T, open Opener) {
	ctx := context.Background()
	st := openFilled(t, open)
	before, err := st.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := st.Revision(ctx); err != nil || again != before {
		t.Errorf("Revision changed without a write: %q, then %q (%v)", before, again, err)
	}
	if err := st.PutOutcome(ctx, "trace-d", trace.Outcome{Source: "labels"}); err != nil {
		t.Fatal(err)
	}
	if after, err := st.Revision(ctx); err != nil || after == before {
		t.Errorf("Revision after a write = %q, %v; want other than %q", after, err, before)
	}
}
