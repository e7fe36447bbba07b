package stats

import (
	"math"
	"testing"
)

func TestRegIncBeta(t *testing.T) {
	tests := []struct {
		a, b, x, want float64
	}{
		// For integer a and b, I_x(a, b) = P(Binomial(a+b-1, x) ≥ a):
		// P(Bin(4, 0.5) ≥ 2) = 11/16.
		{2, 3, 0.5, 0.6875},
		{1, 1, 0.3, 0.3},             // the uniform distribution
		{3, 1, 0.4, 0.064},           // I_x(a, 1) = x^a
		{1, 3, 0.4, 1 - 0.6*0.6*0.6}, // I_x(1, b) = 1 - (1-x)^b
		{5, 5, 0.5, 0.5},             // symmetry
		{2, 3, 0, 0},
		{2, 3, 1, 1},
	}
	for _, tt := range tests {
		if got := RegIncBeta(tt.a, tt.b, tt.x); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("I_%v(%v, %v) = %v, want %v", tt.x, tt.a, tt.b, got, tt.want)
		}
	}
}

func TestStudentTQuantile(t *testing.T) {
	// Two-sided 95% critical values from the standard t table; for a
	// million degrees of freedom, z + (z³ + z)/4ν, the first term of the
	// Cornish-Fisher expansion.
	for _, tt := range []struct{ df, want float64 }{
		{1, 12.7062047}, {2, 4.3026527}, {9, 2.2621572}, {30, 2.0422725}, {100, 1.9839715}, {1e6, 1.9599664},
	} {
		if got := StudentTQuantile(0.975, tt.df); math.Abs(got-tt.want) > 1e-6 {
			t.Errorf("t(0.975, %v) = %v, want %v", tt.df, got, tt.want)
		}
	}
	if got := StudentTQuantile(0.025, 9); math.Abs(got+2.2621572) > 1e-6 {
		t.Errorf("lower quantile %v", got)
	}
	if got := StudentTCDF(0, 5); got != 0.5 {
		t.Errorf("CDF(0) = %v", got)
	}
}

func TestFSurvival(t *testing.T) {
	// Critical values from the standard F tables: P(F > crit) is the level.
	for _, tt := range []struct{ f, d1, d2, want float64 }{
		{4.1028210, 2, 10, 0.05},
		{4.9381922, 3, 20, 0.01},
		{161.4476, 1, 1, 0.05},
		// F(1, d) is t(d) squared: F = 13.5 on (1, 4) is t = 3.674 on 4.
		{13.5, 1, 4, 0.0213116411},
	} {
		if got := FSurvival(tt.f, tt.d1, tt.d2); math.Abs(got-tt.want) > 1e-6 {
			t.Errorf("P(F(%v, %v) > %v) = %v, want %v", tt.d1, tt.d2, tt.f, got, tt.want)
		}
	}
	if FSurvival(0, 2, 3) != 1 {
		t.Error("P(F > 0) is not 1")
	}
}
