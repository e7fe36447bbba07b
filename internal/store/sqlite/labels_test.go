package sqlite

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// Whether the traces asked for are few (looked up by id) or most of the
// store (read in one pass and filtered), the same findings come back, the
// steps of present verdicts decoded.
func TestModeVerdictsFewOrMost(t *testing.T) {
	ctx := context.Background()
	st, ids := openFewOrMost(t)
	for _, n := range []int{10, 999, 1200, 1500} {
		seen := map[string]bool{}
		err := st.ModeVerdicts(ctx, ids[:n], []string{"judge"}, func(v store.ModeVerdict) error {
			switch {
			case v.Source != "judge:a":
				t.Errorf("%d traces: a finding of %s", n, v.Source)
			case v.Verdict == trace.Absent && v.Steps != nil:
				t.Errorf("%d traces: an absent verdict's steps were decoded: %+v", n, v)
			case v.Verdict == trace.Present && (seen[v.Trace] || !slices.Equal(v.Steps, []int{1})):
				t.Errorf("%d traces: unexpected %+v", n, v)
			}
			if v.Verdict == trace.Present {
				seen[v.Trace] = true
			}
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

// openFewOrMost opens a store of 1500 traces, enough that asking for most
// of them reads the findings in one pass, and returns their ids in order.
// Every third trace carries a raw label.
func openFewOrMost(t *testing.T) (*Store, []string) {
	st := open(t)
	var traces []*trace.Trace
	var ids []string
	for i := range 1500 {
		tr := sample(fmt.Sprintf("t%04d", i), "m", nil)
		tr.Findings = []trace.Finding{
			{Mode: "FM-1.3", Source: "judge:a", Verdict: trace.Present, Steps: []int{1}},
			{Mode: "FM-3.3", Source: "judge:a", Verdict: trace.Absent},
			{Mode: "FM-3.3", Source: "human:x", Verdict: trace.Absent},
		}
		if i%3 == 0 {
			tr.Findings = append(tr.Findings, trace.Finding{Source: "human:x", Verdict: trace.Present, Steps: []int{i % 7}, RawLabel: "decisive error"})
		}
		traces = append(traces, tr)
		ids = append(ids, tr.ID)
	}
	ingestFile(t, st, "/f", "h", traces...)
	return st, ids
}

// Whether the traces asked for are few or most of the store, EachFinding
// gives the findings selected of exactly those traces, in id order, however
// the ids are ordered.
func TestEachFindingFewOrMost(t *testing.T) {
	ctx := context.Background()
	st, ids := openFewOrMost(t)
	for _, n := range []int{10, 999, 1200, 1500} {
		for _, tc := range []struct {
			q       store.FindingQuery
			perEach int // findings of each trace asked for
			every   int // of every every-th trace
		}{
			{store.FindingQuery{Sources: []string{"judge"}}, 2, 1},
			{store.FindingQuery{RawLabel: "decisive error"}, 1, 3},
			{store.FindingQuery{Sources: []string{"human"}, RawLabel: "decisive error"}, 1, 3},
			{store.FindingQuery{Sources: []string{"judge"}, RawLabel: "decisive error"}, 0, 1},
		} {
			var want []string
			for i, id := range ids[:n] {
				if i%tc.every == 0 {
					for range tc.perEach {
						want = append(want, id)
					}
				}
			}
			var got []string
			asked := slices.Clone(ids[:n])
			slices.Reverse(asked)
			err := st.EachFinding(ctx, asked, tc.q, func(f store.TraceFinding) error {
				if !tc.q.Match(f.Finding) {
					t.Errorf("%d traces, %+v: unexpected %+v", n, tc.q, f)
				}
				got = append(got, f.Trace)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%d traces, %+v: %d findings came back, want %d in id order", n, tc.q, len(got), len(want))
			}
		}
	}
}

// parseSteps takes the store's own writing fast and leaves everything
// else to encoding/json, so both give the same answer.
func TestParseSteps(t *testing.T) {
	tests := []struct {
		text    string
		want    []int
		wantErr bool
	}{
		{text: "[3,12]", want: []int{3, 12}},
		{text: "[]", want: nil},
		{text: "[7]", want: []int{7}},
		{text: "[ 3, 12 ]", want: []int{3, 12}},
		{text: "3]", wantErr: true},
		{text: "[3", wantErr: true},
		{text: "[03]", wantErr: true},
		{text: "[+3]", wantErr: true},
		{text: "[3,]", wantErr: true},
		{text: "null", want: nil},
	}
	for _, tt := range tests {
		got, err := parseSteps(tt.text)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseSteps(%q) error = %v, want error %v", tt.text, err, tt.wantErr)
			continue
		}
		if !tt.wantErr && !slices.Equal(got, tt.want) {
			t.Errorf("parseSteps(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}
