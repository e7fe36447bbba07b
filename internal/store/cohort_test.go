package store

import (
	"fmt"
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

// TestCohortAddTrace keeps ids across blocks (one longer than a block) and
// outcomes once each, shared by the traces given the same one.
func TestCohortAddTrace(t *testing.T) {
	var c Cohort
	yes := true
	shared, own := &trace.Outcome{Source: "s", Success: &yes}, &trace.Outcome{Source: "o"}
	long := strings.Repeat("x", idBlock+5)
	var want []string
	for i := range 5000 {
		id := fmt.Sprintf("trace-%04d-%s", i, strings.Repeat("y", i%50))
		if i == 2500 {
			id = long
		}
		outcome := shared
		switch i % 3 {
		case 1:
			outcome = nil
		case 2:
			if i == 2 {
				outcome = own
			}
		}
		if got := c.AddTrace(id, outcome, CohortTrace{Detected: i%2 == 0}); got != int32(i) {
			t.Fatalf("trace %d added at %d", i, got)
		}
		want = append(want, id)
	}
	for i := range c.Traces {
		tr := &c.Traces[i]
		if c.ID(tr) != want[i] || tr.Detected != (i%2 == 0) {
			t.Fatalf("trace %d: id %.20q, detected %v", i, c.ID(tr), tr.Detected)
		}
		wantOutcome := shared
		if i%3 == 1 {
			wantOutcome = nil
		} else if i == 2 {
			wantOutcome = own
		}
		if c.Outcome(tr) != wantOutcome {
			t.Fatalf("trace %d: outcome %+v", i, c.Outcome(tr))
		}
	}
	if len(c.outcomes) != 2 {
		t.Errorf("%d outcomes kept, want 2", len(c.outcomes))
	}
}
