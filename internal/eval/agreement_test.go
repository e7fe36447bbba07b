package eval

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/store/sqlite"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/trace"
)

// set builds labels from "trace mode verdict [steps...]" lines; verdicts are
// P, A or U.
func set(name string, lines ...string) *labels.Set {
	s := &labels.Set{Name: name}
	verdicts := map[string]trace.Verdict{"P": trace.Present, "A": trace.Absent, "U": trace.Unsure}
	for _, line := range lines {
		f := strings.Fields(line)
		l := labels.ModeLabel{Trace: f[0], Mode: f[1], Verdict: verdicts[f[2]]}
		for _, st := range f[3:] {
			var n int
			fmt.Sscan(st, &n)
			l.Steps = append(l.Steps, n)
		}
		s.Labels = append(s.Labels, l)
	}
	return s
}

// value reads a metric for comparison: its value, or -99 when undefined.
func value(m Metric) float64 {
	if m.Value == nil {
		return -99
	}
	return *m.Value
}

const undef = -99

func TestAgree(t *testing.T) {
	src := set("src",
		"a FM-1.3 P 6", "b FM-1.3 P", "c FM-1.3 A", "d FM-1.3 A",
		"a FM-3.2 P", "b FM-3.3 P 3", "c FM-3.3 A",
		"d FM-2.2 P", "e FM-1.1 U",
	)
	ref := set("ref",
		"a FM-1.3 P 5", "b FM-1.3 A", "c FM-1.3 P", "d FM-1.3 A", "e FM-1.3 P",
		"a FM-3.2 A", "a FM-3.3 A", "b FM-3.2 P 3", "b FM-3.3 A", "c FM-3.3 A",
		"d FM-2.2 U",
	)
	ag := Agree(src, ref, AgreementOptions{Within: 1})
	type counts struct{ pairs, excluded, tp, fp, fn, tn int }
	type metrics struct{ p, r, f1, k float64 }
	want := []struct {
		mode string
		c    counts
		m    metrics
	}{
		// a TP, b FP, c FN, d TN; e decided by the labels only. Chance
		// agreement is 0.5, as observed: kappa 0.
		{"FM-1.3", counts{4, 1, 1, 1, 1, 1}, metrics{0.5, 0.5, 0.5, 0}},
		// a FP; b decided by the labels only. One rater constant: kappa 0.
		{"FM-3.2", counts{1, 1, 0, 1, 0, 0}, metrics{0, undef, 0, 0}},
		// a decided by the labels only; b FP, c TN.
		{"FM-3.3", counts{2, 1, 0, 1, 0, 1}, metrics{0, undef, 0, 0}},
	}
	if len(ag.Modes) != len(want) {
		t.Fatalf("modes %+v", ag.Modes)
	}
	for i, w := range want {
		r := ag.Modes[i]
		got := counts{r.Pairs, r.Excluded, r.TP, r.FP, r.FN, r.TN}
		gotM := metrics{value(r.Precision), value(r.Recall), value(r.F1), value(r.Kappa)}
		if r.Mode != w.mode || got != w.c || gotM != w.m {
			t.Errorf("row %d: %s %+v %+v; want %s %+v %+v", i, r.Mode, got, gotM, w.mode, w.c, w.m)
		}
		if r.Precision.Lo != nil || r.Kappa.Lo != nil || r.Precision.Interval != "" {
			t.Errorf("%s: an interval when none was asked for", r.Mode)
		}
	}
	// With resamples, the proportions take Wilson's interval: FM-1.3's
	// precision is 1 of 2, its accuracy 2 of 4.
	withIntervals := Agree(src, ref, AgreementOptions{Replicates: 100, Seed: 1, Within: 1})
	for name, tt := range map[string]struct {
		m      Metric
		lo, hi float64
	}{"precision": {withIntervals.Modes[0].Precision, 0.0945, 0.9055}, "accuracy": {withIntervals.Modes[0].Accuracy, 0.1500, 0.8500}} {
		if tt.m.Interval != IntervalWilson || tt.m.Lo == nil || *tt.m.Lo != tt.lo || *tt.m.Hi != tt.hi {
			t.Errorf("FM-1.3 %s: %s [%v, %v]; want Wilson [%v, %v]", name, tt.m.Interval, tt.m.Lo, tt.m.Hi, tt.lo, tt.hi)
		}
	}
	// FM-2.2 (unsure labels) and FM-1.1 (an unsure source) have no pairs.
	// Merged: a 3.2 present vs both absent: FP; b 3.3 vs 3.2: TP; c TN.
	m := ag.Merged
	if m == nil || m.Mode != "FM-3.2+FM-3.3" || m.Pairs != 3 || m.TP != 1 || m.FP != 1 || m.TN != 1 || value(m.Recall) != 1 || value(m.Precision) != 0.5 {
		t.Errorf("merged %+v", m)
	}
	if m.Location == nil || *m.Location != (Location{Pairs: 1, Exact: 1, Within: 1}) {
		t.Errorf("merged location %+v", m.Location)
	}
	// Micro pools the three modes, not the merged row.
	mi := ag.Micro
	if mi.Pairs != 7 || mi.TP != 1 || mi.FP != 3 || mi.FN != 1 || mi.TN != 2 || mi.Excluded != 3 || value(mi.Precision) != 0.25 {
		t.Errorf("micro %+v", mi)
	}
	// a's FM-1.3 is placed one step off.
	if mi.Location == nil || *mi.Location != (Location{Pairs: 1, Exact: 0, Within: 1}) || ag.Modes[0].Location == nil || ag.Modes[1].Location != nil {
		t.Errorf("locations: micro %+v, FM-1.3 %+v, FM-3.2 %+v", mi.Location, ag.Modes[0].Location, ag.Modes[1].Location)
	}
	// Macro averages where defined: precision over 3 modes, recall over 1.
	if ag.Macro.Modes != 3 || value(ag.Macro.Precision) != 0.1667 || value(ag.Macro.Recall) != 0.5 {
		t.Errorf("macro %+v", ag.Macro)
	}
	if ag.Traces != 4 || ag.Source.Traces != 5 || ag.Source.Decided != 8 || ag.Source.Unsure != 1 || ag.Labels.Decided != 10 || ag.Labels.Unsure != 1 {
		t.Errorf("traces %d, sides %+v %+v", ag.Traces, ag.Source, ag.Labels)
	}
}

func TestAgreeDegenerate(t *testing.T) {
	// Both sides agree nothing is there: every statistic but accuracy is
	// undefined, and said to be, not NaN.
	none := Agree(set("s", "a FM-2.4 A", "b FM-2.4 A"), set("r", "a FM-2.4 A", "b FM-2.4 A"), AgreementOptions{Replicates: 50, Seed: 1})
	r := none.Modes[0]
	if value(r.Accuracy) != 1 || r.Precision.Value != nil || r.Recall.Value != nil || r.F1.Value != nil || r.Kappa.Value != nil || r.Kappa.Lo != nil {
		t.Errorf("all absent: %+v", r)
	}
	if none.Merged != nil || none.Macro.Kappa.Value != nil {
		t.Errorf("merged %+v, macro %+v", none.Merged, none.Macro)
	}
	// Perfect agreement on both verdicts: kappa 1 in every resample, so the
	// bootstrap has no interval to give and says so instead of [1, 1];
	// the proportions keep Wilson's interval, which does not collapse.
	same := set("s", "a FM-1.3 P", "b FM-1.3 A", "c FM-1.3 P", "d FM-1.3 A")
	perfect := Agree(same, same, AgreementOptions{Replicates: 200, Seed: 1}).Modes[0]
	if k := perfect.Kappa; value(k) != 1 || !k.Degenerate || k.Lo != nil || k.Hi != nil || k.Interval != IntervalBootstrap {
		t.Errorf("perfect kappa: %+v", k)
	}
	if p := perfect.Precision; value(p) != 1 || p.Degenerate || p.Lo == nil || *p.Lo != 0.3424 || *p.Hi != 1 {
		t.Errorf("perfect precision (2 of 2): %+v", p)
	}
	if a := perfect.Accuracy; a.Lo == nil || *a.Lo != 0.5101 || *a.Hi != 1 {
		t.Errorf("perfect accuracy (4 of 4): %+v", a)
	}
	// Nothing in common: no rows at all.
	apart := Agree(set("s", "a FM-1.3 P"), set("r", "b FM-1.3 P"), AgreementOptions{})
	if len(apart.Modes) != 0 || apart.Merged != nil || apart.Micro != nil || apart.Macro != nil || apart.Traces != 0 {
		t.Errorf("disjoint: %+v", apart)
	}
}

func TestAgreeBootstrap(t *testing.T) {
	var src, ref []string
	for i := range 30 {
		id := fmt.Sprintf("t%02d", i)
		ref = append(ref, fmt.Sprintf("%s FM-1.3 %s", id, map[bool]string{true: "P", false: "A"}[i%3 == 0]))
		src = append(src, fmt.Sprintf("%s FM-1.3 %s", id, map[bool]string{true: "P", false: "A"}[i%3 == 0 && i != 0 || i == 1]))
	}
	opt := AgreementOptions{Replicates: 500, Seed: 7}
	a := Agree(set("s", src...), set("r", ref...), opt)
	b := Agree(set("s", src...), set("r", ref...), opt)
	if !reflect.DeepEqual(a, b) {
		t.Error("same seed, different output")
	}
	opt.Seed = 8
	if c := Agree(set("s", src...), set("r", ref...), opt); reflect.DeepEqual(a, c) {
		t.Error("another seed, same intervals")
	}
	for _, r := range []*Row{&a.Modes[0], a.Micro} {
		for name, m := range map[string]Metric{"precision": r.Precision, "recall": r.Recall, "F1": r.F1, "kappa": r.Kappa} {
			if m.Value == nil || m.Lo == nil || m.Hi == nil || *m.Lo > *m.Hi || *m.Lo < -1 || *m.Hi > 1 || *m.Lo > *m.Value+0.05 || *m.Hi < *m.Value-0.05 {
				t.Errorf("%s %s: %v [%v, %v]", r.Mode, name, value(m), m.Lo, m.Hi)
			}
		}
	}
	// 9 of 10 found, 1 false alarm in 20: a narrow-ish interval, not [0, 1].
	if k := a.Modes[0].Kappa; *k.Lo < 0.5 || *k.Hi < 0.99 {
		t.Errorf("kappa %v [%v, %v]", *k.Value, *k.Lo, *k.Hi)
	}
}

func TestCombine(t *testing.T) {
	P, A, U := trace.Present, trace.Absent, trace.Unsure
	tests := []struct{ a, b, want trace.Verdict }{
		{P, A, P}, {A, P, P}, {A, A, A}, {U, A, U}, {A, U, U}, {U, P, P}, {"", A, A}, {"", "", ""},
	}
	for _, tt := range tests {
		if got := combine(tt.a, tt.b); got != tt.want {
			t.Errorf("combine(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestStoredLabels(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mk := func(id string, findings ...trace.Finding) *trace.Trace {
		tr := &trace.Trace{ID: id, Format: "codex"}
		for range 4 {
			tr.Append(trace.Step{Kind: trace.KindMessage, Text: "x"})
		}
		tr.Findings = findings
		return tr
	}
	f := func(source, mode string, v trace.Verdict, steps ...int) trace.Finding {
		return trace.Finding{Source: source, Mode: mode, Verdict: v, Steps: steps}
	}
	put := func(file, detectedWith string, traces ...*trace.Trace) {
		for _, tr := range traces {
			tr.DetectedWith = detectedWith
		}
		if _, err := ingest.StoreFile(ctx, st, ingest.FileInfo{Path: file, Hash: file}, traces...); err != nil {
			t.Fatal(err)
		}
	}
	current := detect.Version(detect.All)
	put("/1", current,
		mk("a", f("detector", "FM-1.3", trace.Present, 3), f("detector", "FM-1.3", trace.Present, 1),
			f("human:x", "FM-1.3", trace.Absent), f("human:y", "FM-1.3", trace.Present, 2)),
		mk("b", f("human:x", "FM-3.3", trace.Present), f("human:x", "", trace.Present), f("human:x", "FM-9.9", trace.Present)))
	put("/2", "r0:old-detector", mk("c", f("detector", "FM-1.3", trace.Present, 0), f("judge:m", "FM-2.2", trace.Unsure)))
	put("/3", "", mk("d", f("human:x", "FM-1.3", trace.Absent)))
	ids := []string{"a", "b", "c", "d"}

	modes := detectorModes()
	det, err := StoredLabels(ctx, st, "detector", ids)
	if err != nil {
		t.Fatal(err)
	}
	// On a and b, which the current detectors ran on, every mode they look
	// for is decided; c's findings come from another detector set, d was
	// never looked at.
	got := map[string]labels.ModeLabel{}
	for _, l := range det.Labels {
		got[l.Trace+" "+l.Mode] = l
	}
	if len(det.Labels) != 2*len(modes) {
		t.Errorf("detector labels %+v, want %d", det.Labels, 2*len(modes))
	}
	if l := got["a FM-1.3"]; l.Verdict != trace.Present || l.Implied || !slices.Equal(l.Steps, []int{1, 3}) {
		t.Errorf("a FM-1.3 = %+v", l)
	}
	for _, m := range modes {
		if l := got["b "+m]; l.Verdict != trace.Absent || !l.Implied {
			t.Errorf("b %s = %+v", m, l)
		}
	}
	if !strings.Contains(det.Detail, "2 traces they ran on") || !slices.Equal(det.Sources, []string{"detector"}) {
		t.Errorf("detail %q, sources %v", det.Detail, det.Sources)
	}

	// A prefix pools sources: present when any says so. Silence is no
	// verdict; codes outside the taxonomy are left out.
	human, err := StoredLabels(ctx, st, "human", ids)
	if err != nil {
		t.Fatal(err)
	}
	want := "a FM-1.3 present [2]\nb FM-3.3 present []\nd FM-1.3 absent []\n"
	var b strings.Builder
	for _, l := range human.Labels {
		fmt.Fprintf(&b, "%s %s %s %v\n", l.Trace, l.Mode, l.Verdict, l.Steps)
	}
	if b.String() != want || !slices.Equal(human.Sources, []string{"human:x", "human:y"}) {
		t.Errorf("human labels:\n%s\nwant\n%s(sources %v)", b.String(), want, human.Sources)
	}

	if _, err := StoredLabels(ctx, st, "judge:other", ids); err == nil || !strings.Contains(err.Error(), "detector, human:x, human:y, judge:m") {
		t.Errorf("unknown source: %v", err)
	}
}
