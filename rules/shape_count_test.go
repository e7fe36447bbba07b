package rules

import (
	"testing"
)

func TestCountShape(t *testing.T) {
	tr := build(
		result("shell", "timeout", 124),
		result("shell", "ok", 0),
		result("shell", "timeout", 124),
		result("shell", "timeout", 124),
	)
	cases := []shapeCase{
		{"enough", "count:\n  match:\n    exit: 124\n  at_least: 3\n", tr, [][]int{{0, 2, 3}}},
		{"one is enough", "count:\n  match:\n    exit: 0\n  at_least: 1\n", tr, [][]int{{1}}},
		{"not enough", "count:\n  match:\n    exit: 124\n  at_least: 4\n", tr, nil},
		{"none", "count:\n  match:\n    exit: 9\n  at_least: 1\n", tr, nil},
	}
	runShapeCases(t, cases)
	fs := run(t, mustParse(t, rule(cases[0].shape)), tr)
	if want := "rule r: 3 steps matched (at least 3 make a finding); first at step 0."; fs[0].Explanation != want {
		t.Errorf("explanation %q, want %q", fs[0].Explanation, want)
	}
}
