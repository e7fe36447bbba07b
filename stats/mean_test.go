package stats

import (
	"math"
	"testing"
)

func sample(xs ...float64) Running {
	var r Running
	for _, x := range xs {
		r.Add(x)
	}
	return r
}

func TestRunningMeanInterval(t *testing.T) {
	// Hand-checked: mean 5, s² = 32/7, t(0.975, 7) = 2.364624.
	r := sample(2, 4, 4, 4, 5, 5, 7, 9)
	mean, _ := r.Mean()
	v, _ := r.Variance()
	iv, ok := r.MeanInterval(0.95)
	half := 2.3646243 * math.Sqrt(32.0/7/8)
	if r.N() != 8 || mean != 5 || math.Abs(v-32.0/7) > 1e-12 || !ok || math.Abs(iv.Lo-(5-half)) > 1e-6 || math.Abs(iv.Hi-(5+half)) > 1e-6 {
		t.Errorf("n %d mean %v var %v interval %+v, want 5 ± %v", r.N(), mean, v, iv, half)
	}
	if _, ok := sample(3).MeanInterval(0.95); ok {
		t.Error("interval of one value is defined")
	}
	if _, ok := (Running{}).Mean(); ok {
		t.Error("mean of nothing is defined")
	}
	if iv, ok := sample(2, 2, 2).MeanInterval(0.95); !ok || iv.Lo != 2 || iv.Hi != 2 {
		t.Errorf("constant sample: %+v", iv)
	}
}

func TestWelchT(t *testing.T) {
	// Wikipedia's "Welch's t-test" example 1: t = -2.46, ν = 25.0, p = 0.021
	// (p here by numerical integration of the t density).
	a := sample(27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4)
	b := sample(27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4)
	got, ok := WelchT(a, b)
	if !ok || math.Abs(got.T+2.4553564) > 1e-6 || math.Abs(got.DF-24.9885293) > 1e-6 || math.Abs(got.P-0.0213780) > 1e-6 {
		t.Errorf("WelchT = %+v, %v", got, ok)
	}
	if _, ok := WelchT(sample(1, 1), sample(2, 2)); ok {
		t.Error("no variance anywhere: defined")
	}
	if _, ok := WelchT(sample(1), sample(2, 3)); ok {
		t.Error("one value: defined")
	}
}

func TestOneWayANOVA(t *testing.T) {
	// Hand-checked: means 2 and 5, SSB = 13.5, SSW = 4, F(1, 4) = 13.5, the
	// square of the pooled t statistic, p = 0.0213.
	got, ok := OneWayANOVA([]Running{sample(1, 2, 3), sample(4, 5, 6)})
	if !ok || math.Abs(got.F-13.5) > 1e-12 || got.DF1 != 1 || got.DF2 != 4 || math.Abs(got.P-0.0213116411) > 1e-8 || math.Abs(got.EtaSquared-13.5/17.5) > 1e-12 {
		t.Errorf("ANOVA = %+v, %v", got, ok)
	}
	// Three groups of three with means 3, 4 and 5, hand-checked: SSB = 6,
	// SSW = 6, F(2, 6) = 3, and P(F(2, d) > f) = (1 + 2f/d)^(-d/2) = 1/8.
	// An empty sample takes no part.
	got, ok = OneWayANOVA([]Running{sample(2, 3, 4), sample(3, 4, 5), sample(4, 5, 6), {}})
	if !ok || math.Abs(got.F-3) > 1e-12 || got.DF1 != 2 || got.DF2 != 6 || math.Abs(got.P-0.125) > 1e-9 {
		t.Errorf("three groups: %+v, %v", got, ok)
	}
	if _, ok := OneWayANOVA([]Running{sample(1, 2)}); ok {
		t.Error("one group: defined")
	}
	if _, ok := OneWayANOVA([]Running{sample(1, 1), sample(2, 2)}); ok {
		t.Error("no within-group variance: defined")
	}
}
