package stats

import (
	"math"
	"testing"
)

func TestOddsRatio(t *testing.T) {
	tests := []struct {
		name       string
		a, b, c, d int
		or, lo, hi float64
		corrected  bool
	}{
		// Hand-checked: (12·51)/(12·25) = 2.04, Woolf SE sqrt(1/12+1/12+1/25+1/51).
		{"study FM-3.3", 12, 12, 25, 51, 2.04, 0.8030228269, 5.1824180593, false},
		// A zero cell: 0.5 added to each, (5.5·10.5)/(0.5·2.5) = 46.2.
		{"zero cell, Haldane", 5, 0, 2, 10, 46.2, 1.8703828169, 1141.1781485260, true},
		{"no association", 4, 4, 4, 4, 1, math.Exp(-Z95), math.Exp(Z95), false},
	}
	for _, tt := range tests {
		got := NewOddsRatio(tt.a, tt.b, tt.c, tt.d, Z95)
		if math.Abs(got.Value-tt.or) > 1e-9 || math.Abs(got.Lo-tt.lo) > 1e-8 || math.Abs(got.Hi-tt.hi) > 1e-6 || got.Corrected != tt.corrected {
			t.Errorf("%s: %+v, want %v [%v, %v] corrected %v", tt.name, got, tt.or, tt.lo, tt.hi, tt.corrected)
		}
	}
}

func TestPhi(t *testing.T) {
	// Hand-checked: (20·15 - 5·10) / sqrt(25·25·30·20) = 250/612.372…
	if got, ok := Phi(20, 5, 10, 15); !ok || math.Abs(got-0.4082482905) > 1e-9 {
		t.Errorf("Phi = %v, %v", got, ok)
	}
	if got, ok := Phi(5, 0, 0, 5); !ok || got != 1 {
		t.Errorf("perfect association: %v", got)
	}
	if _, ok := Phi(3, 4, 0, 0); ok {
		t.Error("phi with an empty row is defined")
	}
}
