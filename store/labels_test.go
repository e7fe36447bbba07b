package store

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/faultline/faultline/trace"
)

// ModeVerdicts selects in SQL exactly the sources MatchSource selects, and
// decodes the steps of present verdicts.
func TestModeVerdictsSelectsSources(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	tr := sample("a", "m", nil)
	all := []string{"detector", "judge", "judge:gpt", "judge:gpt:t0", "judge2", "judgement", "human:ann", "human:ann2", "mad:annotator_1"}
	tr.Findings = nil
	for _, src := range all {
		tr.Findings = append(tr.Findings,
			trace.Finding{Mode: "FM-1.3", Source: src, Verdict: trace.Present, Steps: []int{1, 2}},
			trace.Finding{Mode: "FM-3.3", Source: src, Verdict: trace.Absent})
	}
	tr.Findings = append(tr.Findings, trace.Finding{RawLabel: "unmapped", Source: "judge", Verdict: trace.Present})
	ingestFile(t, st, "/f", "h", tr)
	for _, selected := range [][]string{nil, {"judge"}, {"judge:gpt"}, {"human:ann"}, {"human"}, {"judge", "mad"}, {"nobody"}, {"judge:"}} {
		var got []string
		err := st.ModeVerdicts(ctx, []string{"a"}, selected, func(v ModeVerdict) error {
			if v.Mode == "FM-1.3" {
				got = append(got, v.Source)
				if !slices.Equal(v.Steps, []int{1, 2}) {
					t.Errorf("%s: steps %v", v.Source, v.Steps)
				}
			} else if v.Steps != nil {
				t.Errorf("%s: an absent verdict's steps were decoded: %v", v.Source, v.Steps)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, src := range all {
			if MatchSource(src, selected) {
				want = append(want, src)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("sources %q: got %q, want %q", selected, got, want)
		}
	}
}

// Whether the traces asked for are few (looked up by id) or most of the
// store (read in one pass and filtered), the same findings come back.
func TestModeVerdictsFewOrMost(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	var traces []*trace.Trace
	var ids []string
	for i := range 1500 {
		tr := sample(fmt.Sprintf("t%04d", i), "m", nil)
		tr.Findings = []trace.Finding{
			{Mode: "FM-1.3", Source: "judge:a", Verdict: trace.Present, Steps: []int{1}},
			{Mode: "FM-3.3", Source: "human:x", Verdict: trace.Absent},
		}
		traces = append(traces, tr)
		ids = append(ids, tr.ID)
	}
	ingestFile(t, st, "/f", "h", traces...)
	for _, n := range []int{10, 999, 1200, 1500} {
		seen := map[string]bool{}
		err := st.ModeVerdicts(ctx, ids[:n], []string{"judge"}, func(v ModeVerdict) error {
			if v.Source != "judge:a" || seen[v.Trace] || !slices.Equal(v.Steps, []int{1}) {
				t.Errorf("%d traces: unexpected %+v", n, v)
			}
			seen[v.Trace] = true
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != n || !seen[ids[n-1]] || seen[fmt.Sprintf("t%04d", n)] {
			t.Errorf("%d traces asked for, %d came back", n, len(seen))
		}
	}
}
