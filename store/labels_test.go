package store

import (
	"context"
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
