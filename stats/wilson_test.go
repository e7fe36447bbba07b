package stats

import (
	"math"
	"testing"
)

func TestWilson(t *testing.T) {
	tests := []struct {
		k, n   int
		lo, hi float64
	}{
		// The textbook example: 81 of 263.
		{81, 263, 0.2552885199, 0.3662095770},
		// No successes: the interval still has width, unlike p ± z·SE.
		{0, 10, 0, 0.2775327999},
		{10, 10, 0.7224672001, 1},
		{1, 4, 0.0455872608, 0.6993581574},
		// 19 traces, every one agreed: a percentile bootstrap gives [1, 1];
		// Wilson's lower bound stays below.
		{19, 19, 0.8318207759, 1},
		{1, 2, 0.0945312057, 0.9054687943},
	}
	for _, tt := range tests {
		got, ok := Wilson(tt.k, tt.n, Z95)
		if !ok || math.Abs(got.Lo-tt.lo) > 1e-9 || math.Abs(got.Hi-tt.hi) > 1e-9 {
			t.Errorf("Wilson(%d, %d) = %+v, %v; want [%v, %v]", tt.k, tt.n, got, ok, tt.lo, tt.hi)
		}
	}
	if _, ok := Wilson(0, 0, Z95); ok {
		t.Error("Wilson of no trials is defined")
	}
}
