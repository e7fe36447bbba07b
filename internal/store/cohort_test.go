package store

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

func TestCohortNames(t *testing.T) {
	var c Cohort
	if c.Text(0) != "" || c.Text(7) != "" {
		t.Errorf("an empty cohort names %q, %q", c.Text(0), c.Text(7))
	}
	for _, tc := range []struct {
		s    string
		want Name
	}{{"gpt-5", 1}, {"", 0}, {"itbench", 2}, {"gpt-5", 1}, {"", 0}} {
		if got := c.NameOf(tc.s); got != tc.want || c.Text(got) != tc.s {
			t.Errorf("NameOf(%q) = %d (%q), want %d", tc.s, got, c.Text(got), tc.want)
		}
	}
	var empty Cohort
	if got := empty.NameOf(""); got != 0 || empty.NameOf("x") != 1 {
		t.Errorf("a cohort named \"\" first: %d", got)
	}
}

// TestCohortAddTrace keeps ids across blocks, one longer than a block.
func TestCohortAddTrace(t *testing.T) {
	var c Cohort
	long := strings.Repeat("x", idBlock+5)
	var want []string
	for i := range 5000 {
		id := fmt.Sprintf("trace-%04d-%s", i, strings.Repeat("y", i%50))
		if i == 2500 {
			id = long
		}
		if got := c.AddTrace(id, CohortTrace{Detected: i%2 == 0, Outcome: Outcome(i % 3)}); got != int32(i) {
			t.Fatalf("trace %d added at %d", i, got)
		}
		want = append(want, id)
	}
	for i := range c.Traces {
		tr := &c.Traces[i]
		if c.ID(tr) != want[i] || tr.Detected != (i%2 == 0) || tr.Outcome != Outcome(i%3) {
			t.Fatalf("trace %d: id %.20q, detected %v, outcome %d", i, c.ID(tr), tr.Detected, tr.Outcome)
		}
	}
}

// TestCohortKeepOutcome keeps outcomes as they are, one copy of each value
// (of the first maxSharedOutcomes), in more than one block.
func TestCohortKeepOutcome(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	yes, no := true, false
	var c Cohort
	outcome := func(n Outcome) *trace.Outcome { return c.Outcome(&CohortTrace{Outcome: n}) }
	if c.KeepOutcome(nil) != 0 || outcome(0) != nil {
		t.Error("no outcome is kept as one")
	}
	a := c.KeepOutcome(&trace.Outcome{Source: "itbench", Metric: "recall", Score: f(0.5), Success: &no})
	if b := c.KeepOutcome(&trace.Outcome{Source: "itbench", Metric: "recall", Score: f(0.5), Success: &no}); a != b {
		t.Error("two outcomes of one value have two copies")
	}
	for _, o := range []trace.Outcome{
		{Source: "itbench", Metric: "recall", Score: f(1), Success: &no},
		{Source: "itbench", Metric: "recall", Score: f(0.5), Success: &yes},
		{Source: "itbench", Metric: "recall", Success: &no},
		{Source: "itbench", Metric: "precision", Score: f(0.5), Success: &no},
		{Source: "labels", Metric: "recall", Score: f(0.5), Success: &no},
		{Source: "itbench", Metric: "recall", Score: f(math.Copysign(0, -1)), Success: &no},
		{Source: "itbench", Metric: "recall", Detail: `{"status":"not a diagnosis"}`},
	} {
		got := c.KeepOutcome(&o)
		if got == a {
			t.Errorf("%+v shares the copy of another value", o)
		}
		if !reflect.DeepEqual(*outcome(got), o) {
			t.Errorf("kept %+v as %+v", o, *outcome(got))
		}
	}
	for i := range maxSharedOutcomes + 10 {
		c.KeepOutcome(&trace.Outcome{Source: "x", Score: f(float64(i))})
	}
	if len(c.shared) > maxSharedOutcomes {
		t.Errorf("%d outcomes shared, past the bound of %d", len(c.shared), maxSharedOutcomes)
	}
	late := trace.Outcome{Source: "x", Score: f(maxSharedOutcomes + 5)}
	if got := c.KeepOutcome(&late); !reflect.DeepEqual(*outcome(got), late) {
		t.Errorf("past the bound, kept %+v as %+v", late, *outcome(got))
	}
	if first := outcome(a); first.Source != "itbench" || *first.Score != 0.5 || *first.Success {
		t.Errorf("the first outcome, after %d more: %+v", c.kept, *first)
	}
}
