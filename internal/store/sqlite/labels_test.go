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
		traces = append(traces, tr)
		ids = append(ids, tr.ID)
	}
	ingestFile(t, st, "/f", "h", traces...)
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
