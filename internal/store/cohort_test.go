package store

import "testing"

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
