package stats

import "math"

// Running accumulates a sample one value at a time (Welford's method, which
// stays accurate where the sum of squares would cancel), so that a mean and
// its interval can be had without keeping the values.
type Running struct {
	n        int
	mean, m2 float64
}

// Add puts x in the sample.
func (r *Running) Add(x float64) {
	r.n++
	d := x - r.mean
	r.mean += d / float64(r.n)
	r.m2 += d * (x - r.mean)
}

// N is the sample size.
func (r Running) N() int { return r.n }

// Mean is the sample mean; undefined for an empty sample.
func (r Running) Mean() (float64, bool) { return r.mean, r.n > 0 }

// Variance is the sample variance (divided by n - 1); undefined below two
// values.
func (r Running) Variance() (float64, bool) {
	if r.n < 2 {
		return 0, false
	}
	return r.m2 / float64(r.n-1), true
}

// MeanInterval is the Student t interval for the mean at the given level
// (0.95 for 95%): mean ± t(n-1)·s/√n. It is undefined below two values.
// A sample whose values are all equal gets a zero-width interval, which
// says only that the sample shows no spread.
func (r Running) MeanInterval(level float64) (Interval, bool) {
	v, ok := r.Variance()
	if !ok {
		return Interval{}, false
	}
	half := StudentTQuantile(1-(1-level)/2, float64(r.n-1)) * math.Sqrt(v/float64(r.n))
	return Interval{Lo: r.mean - half, Hi: r.mean + half}, true
}

// TTest is the result of a t test.
type TTest struct {
	T, DF, P float64 // P is two-sided
}

// WelchT tests whether two samples have the same mean without assuming
// equal variances (Welch's t test, Welch-Satterthwaite degrees of freedom).
// It is undefined when either sample has fewer than two values or neither
// varies.
func WelchT(a, b Running) (TTest, bool) {
	va, okA := a.Variance()
	vb, okB := b.Variance()
	if !okA || !okB {
		return TTest{}, false
	}
	sa, sb := va/float64(a.n), vb/float64(b.n)
	if sa+sb == 0 {
		return TTest{}, false
	}
	t := (a.mean - b.mean) / math.Sqrt(sa+sb)
	df := (sa + sb) * (sa + sb) / (sa*sa/float64(a.n-1) + sb*sb/float64(b.n-1))
	return TTest{T: t, DF: df, P: 2 * StudentTCDF(-math.Abs(t), df)}, true
}

// ANOVA is the result of a one-way analysis of variance.
type ANOVA struct {
	F, DF1, DF2, P float64
	// EtaSquared is the share of the total variance that the grouping
	// explains: between-group over total sum of squares.
	EtaSquared float64
}

// OneWayANOVA tests whether samples share one mean: F is the between-group
// mean square over the within-group one, on k - 1 and N - k degrees of
// freedom. It is undefined with fewer than two samples, no within-group
// degrees of freedom, or no within-group variation at all.
func OneWayANOVA(samples []Running) (ANOVA, bool) {
	var all Running
	var within float64
	k := 0
	for _, s := range samples {
		if s.n == 0 {
			continue
		}
		k++
		within += s.m2
		all = merge(all, s)
	}
	df1, df2 := float64(k-1), float64(all.n-k)
	if k < 2 || df2 < 1 || within == 0 {
		return ANOVA{}, false
	}
	between := all.m2 - within
	f := (between / df1) / (within / df2)
	return ANOVA{F: f, DF1: df1, DF2: df2, P: FSurvival(f, df1, df2), EtaSquared: between / all.m2}, true
}

// merge pools two samples (Chan et al.'s parallel form of Welford).
func merge(a, b Running) Running {
	if a.n == 0 {
		return b
	}
	n := a.n + b.n
	d := b.mean - a.mean
	return Running{
		n:    n,
		mean: a.mean + d*float64(b.n)/float64(n),
		m2:   a.m2 + b.m2 + d*d*float64(a.n)*float64(b.n)/float64(n),
	}
}
