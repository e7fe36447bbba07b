package analyze

import "testing"

// A group the rule cannot call names the side that is short, or both.
func TestUncalled(t *testing.T) {
	rule := NewRule(0.05, 5, 5, 0.2, 0.25)
	for _, tc := range []struct {
		succeeded, failed int
		want              string
	}{
		{5, 5, ""},
		{4, 0, TooFewEither},
		{0, 9, TooFewSucceeded},
		{9, 4, TooFewFailed},
	} {
		if got := rule.Uncalled(&Group{Succeeded: tc.succeeded, Failed: tc.failed}); got != tc.want {
			t.Errorf("%d succeeded, %d failed: %q, want %q", tc.succeeded, tc.failed, got, tc.want)
		}
	}
}
