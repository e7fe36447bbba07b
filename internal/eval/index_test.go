package eval

import (
	"reflect"
	"testing"

	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/trace"
)

func TestIndex(t *testing.T) {
	set := &labels.Set{Name: "human:a", Detail: "by hand", Sources: []string{"human:a"}, Labels: []labels.ModeLabel{
		{Trace: "t2", Mode: "FM-1.3", Verdict: trace.Present, Steps: []int{4, 9}},
		{Trace: "t2", Mode: "FM-3.3", Verdict: trace.Unsure},
		{Trace: "t1", Mode: "FM-1.3", Verdict: trace.Absent, Implied: true},
		// A repeated pair: the last one counts.
		{Trace: "t2", Mode: "FM-1.3", Verdict: trace.Absent},
	}}
	x := Index(set)
	wantSide := Side{Name: "human:a", Detail: "by hand", Sources: []string{"human:a"}, Traces: 2, Decided: 3, Implied: 1, Unsure: 1}
	if got := x.Describe(); !reflect.DeepEqual(got, wantSide) {
		t.Errorf("Describe() = %+v, want %+v", got, wantSide)
	}
	tests := []struct {
		trace, mode string
		want        labels.ModeLabel
	}{
		{"t2", "FM-1.3", labels.ModeLabel{Trace: "t2", Mode: "FM-1.3", Verdict: trace.Absent}},
		{"t2", "FM-3.3", labels.ModeLabel{Trace: "t2", Mode: "FM-3.3", Verdict: trace.Unsure}},
		{"t1", "FM-1.3", labels.ModeLabel{Trace: "t1", Mode: "FM-1.3", Verdict: trace.Absent, Implied: true}},
		{"t1", "FM-3.3", labels.ModeLabel{}},
		{"t1", "FM-2.1", labels.ModeLabel{}},
		{"t3", "FM-1.3", labels.ModeLabel{}},
	}
	for _, tc := range tests {
		if got := x.get(tc.trace, tc.mode); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("get(%s, %s) = %+v, want %+v", tc.trace, tc.mode, got, tc.want)
		}
	}
	// The set listed again holds every label, steps and all.
	if got := x.Set(); !reflect.DeepEqual(got, set) {
		t.Errorf("Set() = %+v, want %+v", got, set)
	}
	if got := Index(&labels.Set{Name: "none"}).Describe(); got.Sources == nil || got.Traces != 0 {
		t.Errorf("empty: %+v (sources must be [] in JSON)", got)
	}
}
