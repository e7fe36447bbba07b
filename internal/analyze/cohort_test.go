package analyze

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/store/memory"
	"github.com/faultline/faultline/trace"
)

// cohortSpec is one trace of a hand-built cohort: its model, outcome and
// the modes present with the step each is first located at (-1: not located).
type cohortSpec struct {
	id, model string
	success   *bool
	modes     map[string]int
}

func buildStore(t *testing.T, specs []cohortSpec) *memory.Store {
	t.Helper()
	var traces []*trace.Trace
	for _, s := range specs {
		tr := &trace.Trace{ID: s.id, Format: "codex", Model: s.model}
		tr.Append(trace.Step{Kind: trace.KindMessage, Text: "x"})
		for mode, step := range s.modes {
			f := trace.Finding{Mode: mode, Source: "human:ann", Verdict: trace.Present}
			if step >= 0 {
				f.Steps = []int{step}
			}
			tr.Findings = append(tr.Findings, f)
		}
		if s.success != nil {
			score := 0.0
			if *s.success {
				score = 1
			}
			tr.Outcomes = []trace.Outcome{{Source: "itbench", Metric: "root_cause_recall", Score: &score, Success: s.success}}
		}
		traces = append(traces, tr)
	}
	return memory.New(traces...)
}

var yes, no = ptr(true), ptr(false)

// testCohort: m1 has 6 failures, all with FM-3.3 (first located at step 5
// after FM-2.6 at step 2 in one), and 6 successes with FM-1.3 in four;
// m2 is too small to call; one trace has no outcome; one failure shows
// only a harness failure.
func testCohort() []cohortSpec {
	var specs []cohortSpec
	for i := range 6 {
		modes := map[string]int{"FM-3.3": 5}
		switch i {
		case 0:
			modes["FM-2.6"] = 2
		case 1, 2, 3:
			modes["FM-1.3"] = 5 // a tie with FM-3.3
		case 4:
			modes["FM-1.4"] = -1 // not located
		}
		specs = append(specs, cohortSpec{id: fmt.Sprintf("m1-f%d", i), model: "m1", success: no, modes: modes})
	}
	for i := range 6 {
		modes := map[string]int{}
		if i < 4 {
			modes["FM-1.3"] = 3
		}
		specs = append(specs, cohortSpec{id: fmt.Sprintf("m1-s%d", i), model: "m1", success: yes, modes: modes})
	}
	specs = append(specs,
		cohortSpec{id: "m2-f0", model: "m2", success: no, modes: map[string]int{"FM-3.3": 1, "FM-1.5": 4}},
		cohortSpec{id: "m2-f1", model: "m2", success: no, modes: map[string]int{"SYS-1": 0}},
		cohortSpec{id: "m2-s0", model: "m2", success: yes, modes: map[string]int{"FM-1.3": 2}},
		cohortSpec{id: "m2-u0", model: "m2", modes: map[string]int{"FM-1.3": 2}},
	)
	return specs
}

func TestBuildReport(t *testing.T) {
	ctx := context.Background()
	st := buildStore(t, testCohort())
	// The detectors ran on m2-f1 and found nothing: it still counts as annotated by them.
	if err := st.ReplaceFindings(ctx, "m2-f1", "detector", nil, "v1"); err != nil {
		t.Fatal(err)
	}
	r, err := BuildReport(ctx, st, ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Schema != ReportSchema || r.By != "model" || r.Traces != 16 || len(r.Groups) != 2 || r.All.Name != "all" {
		t.Fatalf("report = %+v", r)
	}
	if want := []string{"detector", "human:ann"}; fmt.Sprint(r.Sources) != fmt.Sprint(want) {
		t.Errorf("sources = %v, want %v", r.Sources, want)
	}
	m1, m2 := r.Groups[0], r.Groups[1]
	if m1.Traces != 12 || m1.Succeeded != 6 || m1.Failed != 6 || m1.WithModes != 10 || m1.SuccessRate != (Proportion{6, 12}) {
		t.Errorf("m1 overview = %+v", m1)
	}
	if m1.Metric == nil || m1.Metric.Name != "root_cause_recall" || *m1.Metric.Value != 0.5 || m1.Metric.N != 12 {
		t.Errorf("m1 metric = %+v", m1.Metric)
	}
	if m2.Unknown != 1 || m2.Annotated[0] != (SourceShare{"detector", Proportion{1, 4}}) || m2.Annotated[1] != (SourceShare{"human:ann", Proportion{4, 4}}) {
		t.Errorf("m2: unknown %d, annotated %+v", m2.Unknown, m2.Annotated)
	}

	// Fatal and non-fatal in m1. Fisher for FM-3.3, 6/6 against 0/6: 2/924.
	byMode := map[string]*ModeStats{}
	for _, m := range m1.Modes {
		byMode[m.Mode] = m
	}
	fm33, fm13, fm26 := byMode["FM-3.3"], byMode["FM-1.3"], byMode["FM-2.6"]
	if fm33.Failed != (Proportion{6, 6}) || fm33.Succeeded != (Proportion{0, 6}) || math.Abs(fm33.Test.P-0.002165) > 1e-6 ||
		fm33.Class != Fatal || !fm33.NeverInSuccesses || fm33.Lift != nil || !fm33.OddsRatio.Corrected || *fm33.Difference != 1 {
		t.Errorf("FM-3.3 = %+v, test %+v", fm33, fm33.Test)
	}
	if fm13.Class != NonFatal || *fm13.Lift != -0.25 || fm13.NeverInSuccesses {
		t.Errorf("FM-1.3 = %+v", fm13)
	}
	if fm26.Class != Inconclusive || !fm26.NeverInSuccesses {
		t.Errorf("FM-2.6 = %+v", fm26)
	}
	for _, m := range m2.Modes {
		if m.Class != TooFewEither || m.Test != nil { // 1 success and 2 failures
			t.Errorf("m2 %s: class %s, test %v", m.Mode, m.Class, m.Test)
		}
	}
	// Tests: m1's 4 modes, all's 5 (m2 is too small), and the onset test of
	// all's cascades (m1's onsets show no variation within them).
	if r.Tests != 10 || m1.Cascades.OnsetTest != nil || r.All.Cascades.OnsetTest == nil {
		t.Errorf("%d tests, want 10; onset tests %+v, %+v", r.Tests, m1.Cascades.OnsetTest, r.All.Cascades.OnsetTest)
	}

	// SYS-1 is in no MAST figure.
	if m2.System.Traces != 1 || m2.System.Failed != 1 || len(m2.System.Codes) != 1 || m2.System.Codes[0].Code != "SYS-1" || m2.System.Codes[0].Name != "Empty model response" {
		t.Errorf("m2 system = %+v", m2.System)
	}
	if m2.WithModes != 3 || *m2.Density.Failed.Value != 1 || fmt.Sprint(m2.Density.Distribution) != "[1 0 1]" {
		t.Errorf("m2 with modes %d, density %+v", m2.WithModes, m2.Density)
	}
	// m1's failed traces: f0 to f4 with 2 modes, f5 with 1.
	if fmt.Sprint(m1.Density.Distribution) != "[0 1 5]" || math.Abs(*m1.Density.Failed.Value-1.8333) > 1e-9 {
		t.Errorf("m1 density = %+v", m1.Density)
	}

	// Cascades in m1: FM-2.6 → FM-3.3 once; FM-1.3 and FM-3.3 tied at step
	// 5 three times, ordered by code; FM-1.4 unlocated.
	c := m1.Cascades
	if c.Failed != 6 || c.Ordered != 6 || c.Unlocated != 1 || c.Ties != 3 {
		t.Errorf("cascades = %+v", c)
	}
	if len(c.Onsets) != 3 || c.Onsets[0].Mode != "FM-1.3" || c.Onsets[0].Traces != 3 || c.Onsets[1].Mode != "FM-3.3" || c.Onsets[1].Traces != 2 {
		t.Errorf("onsets = %+v", c.Onsets)
	}
	if len(c.Transitions) != 2 || c.Transitions[0] != (Transition{"FM-1.3", "FM-3.3", 3}) || c.Transitions[1] != (Transition{"FM-2.6", "FM-3.3", 1}) {
		t.Errorf("transitions = %+v", c.Transitions)
	}

	// Co-occurrence in m1: FM-1.3 with FM-3.3 on 3 traces.
	if p := m1.Pairs[0]; p.A != "FM-1.3" || p.B != "FM-3.3" || p.Both != 3 || p.WithA != 7 || p.WithB != 6 || p.BGivenA != 0.4286 || p.AGivenB != 0.5 {
		t.Errorf("top pair = %+v", p)
	}

	// Interventions: the verification gate, reaching every failure of m1.
	if len(m1.Interventions) != 1 {
		t.Fatalf("interventions = %+v", m1.Interventions)
	}
	rec := m1.Interventions[0]
	if rec.Rank != 1 || rec.Intervention != "verification-gate" || rec.Failed != (Proportion{6, 6}) || fmt.Sprint(rec.Examples) != "[m1-f0 m1-f1 m1-f2]" || rec.Modes[0].Mode != "FM-3.3" {
		t.Errorf("recommendation = %+v", rec)
	}
	if len(m2.Interventions) != 0 {
		t.Errorf("m2 too small, yet %+v", m2.Interventions)
	}
}

func TestBuildReportOptions(t *testing.T) {
	ctx := context.Background()
	st := buildStore(t, testCohort())
	r, err := BuildReport(ctx, st, ReportOptions{Compare: []string{"m2", "m1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Groups) != 2 || r.Groups[0].Name != "m2" || r.Traces != 16 || r.Compare == nil {
		t.Fatalf("compare report: %d groups, compare %+v", len(r.Groups), r.Compare)
	}
	cmp := r.Compare
	if cmp.A != "m2" || cmp.B != "m1" || cmp.Success.A != (Proportion{1, 3}) || cmp.Success.B != (Proportion{6, 12}) || cmp.Success.Test == nil {
		t.Errorf("success contrast = %+v", cmp.Success)
	}
	if len(cmp.Modes) != 5 || cmp.Modes[0].Mode != "FM-1.3" || cmp.Modes[0].A != (Proportion{2, 4}) || cmp.Modes[0].B != (Proportion{7, 12}) {
		t.Errorf("mode contrasts = %+v", cmp.Modes)
	}
	if cmp.Density.Test == nil || cmp.Density.Higher != "" {
		t.Errorf("density contrast = %+v", cmp.Density)
	}

	for _, bad := range [][]string{{"m1", "nope"}, {"m1", "m1"}, {"m1"}} {
		if _, err := BuildReport(ctx, st, ReportOptions{Compare: bad}); err == nil {
			t.Errorf("compare %v accepted", bad)
		}
	}
	if _, err := BuildReport(ctx, st, ReportOptions{By: "colour"}); err == nil {
		t.Error("grouping by colour accepted")
	}

	// Another source selection finds nothing; a subset of traces.
	r, err = BuildReport(ctx, st, ReportOptions{Sources: []string{"judge"}, IDs: []string{"m1-f0", "m2-f0"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Traces != 2 || len(r.Sources) != 0 || r.All.WithModes != 0 || len(r.All.Modes) != 0 {
		t.Errorf("judge only: %+v", r.All)
	}
}

func TestSignificant4(t *testing.T) {
	for x, want := range map[float64]float64{0.123456: 0.1235, 4.348701688e-92: 4.349e-92, 1e-310: 1e-310, 0: 0, 1: 1, 262399.7: 262400} {
		if got := significant4(x); got != want {
			t.Errorf("significant4(%g) = %g, want %g", x, got, want)
		}
	}
}

// TestReportGroupsModelsByCanonicalName: one model written several ways
// is one group, which lists the names it merged; the alias table merges
// others; a comparison takes any of a model's names.
func TestReportGroupsModelsByCanonicalName(t *testing.T) {
	st := buildStore(t, []cohortSpec{
		{id: "a", model: "gpt-oss-120b", success: yes},
		{id: "b", model: "openai/gpt-oss-120b", success: no},
		{id: "c", model: "watsonx/openai/gpt-oss-120b", success: no},
		{id: "d", model: "gpt-oss-120b-fp8", success: yes},
		{id: "e", model: "", success: yes},
	})
	tests := []struct {
		name    string
		opt     ReportOptions
		want    string // each group: name, traces, the names merged
		compare string
	}{
		{"built-in rules", ReportOptions{}, "(unknown) 1 []; gpt-oss-120b 3 [openai/gpt-oss-120b watsonx/openai/gpt-oss-120b]; gpt-oss-120b-fp8 1 []", ""},
		{"alias table", ReportOptions{Aliases: map[string]string{"gpt-oss-120b-fp8": "gpt-oss-120b"}},
			"(unknown) 1 []; gpt-oss-120b 4 [gpt-oss-120b-fp8 openai/gpt-oss-120b watsonx/openai/gpt-oss-120b]", ""},
		{"compared under other names", ReportOptions{Compare: []string{"openai/gpt-oss-120b", "gpt-oss-120b-fp8"}},
			"gpt-oss-120b 3 [openai/gpt-oss-120b watsonx/openai/gpt-oss-120b]; gpt-oss-120b-fp8 1 []", "gpt-oss-120b gpt-oss-120b-fp8"},
		{"by system: names as written", ReportOptions{By: "system"}, "(unknown) 5 []", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := BuildReport(context.Background(), st, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, g := range r.Groups {
				got = append(got, fmt.Sprint(g.Name, " ", g.Traces, " ", g.AlsoWrittenAs))
			}
			if s := strings.Join(got, "; "); s != tt.want {
				t.Errorf("groups %s\nwant %s", s, tt.want)
			}
			if tt.compare != "" && (r.Compare == nil || r.Compare.A+" "+r.Compare.B != tt.compare) {
				t.Errorf("compare %+v, want %s", r.Compare, tt.compare)
			}
		})
	}
}

// TestModeMarks holds modeMarks, which keeps each trace compactly once
// another is marked, to a plain fold of the same marks, with the marks in
// the loaders' order (a trace's together) and shuffled (traces marked
// again after others).
func TestModeMarks(t *testing.T) {
	modes := []string{"FM-1.1", "FM-1.3", "FM-2.6", "FM-3.3", "SYS-1", "custom-x"}
	rng := rand.New(rand.NewPCG(1, 2))
	var marks []store.Mark
	for tr := range int32(40) {
		if tr%7 == 3 {
			continue // a trace without marks
		}
		for range rng.IntN(6) {
			marks = append(marks, store.Mark{Trace: tr, Mode: modes[rng.IntN(len(modes))], Step: int32(rng.IntN(30)) - 5})
		}
	}
	for _, tc := range []struct {
		name    string
		shuffle bool
	}{{"trace after trace", false}, {"shuffled", true}} {
		t.Run(tc.name, func(t *testing.T) {
			order := slices.Clone(marks)
			if tc.shuffle {
				rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			}
			mm, want := newModeMarks(), map[int32]*found{}
			codes := map[string]int32{}
			for _, mk := range order {
				mm.add(mk)
				f := want[mk.Trace]
				if f == nil {
					f = &found{}
					want[mk.Trace] = f
				}
				k := mastIndex(mk.Mode)
				if k < 0 {
					if _, ok := codes[mk.Mode]; !ok {
						codes[mk.Mode] = int32(len(codes))
					}
					if !slices.Contains(f.system, codes[mk.Mode]) {
						f.system = append(f.system, codes[mk.Mode])
					}
					continue
				}
				f.modes |= 1 << k
				if mk.Step >= 0 && (f.first[k] == 0 || uint32(mk.Step)+1 < f.first[k]) {
					f.first[k] = uint32(mk.Step) + 1
				}
			}
			for tr := range int32(45) {
				w := want[tr]
				if w == nil {
					w = &found{}
				}
				got := mm.of(tr)
				if got.modes != w.modes || got.first != w.first || !slices.Equal(got.system, w.system) ||
					mm.modes(tr) != w.modes || !slices.Equal(mm.systemOf(tr), w.system) {
					t.Errorf("trace %d: %+v (modes %b, system %v), want %+v", tr, got, mm.modes(tr), mm.systemOf(tr), *w)
				}
			}
		})
	}
}
