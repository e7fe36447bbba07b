package stats

import "math"

// Z95 is the standard normal quantile for a two-sided 95% interval.
const Z95 = 1.959963984540054

// Wilson returns the Wilson score interval for a proportion of k successes
// in n trials, for the normal quantile z (Z95 for 95%). Unlike the textbook
// p ± z·SE interval, it stays within [0, 1] and does not collapse to a point
// when k is 0 or n, which matters for the small groups a cohort report
// often has. It is undefined for n = 0.
func Wilson(k, n int, z float64) (Interval, bool) {
	if n <= 0 || k < 0 || k > n {
		return Interval{}, false
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := z * z
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	// Clamp the rounding error at the ends (1 - 1e-17 for k = n).
	return Interval{Lo: max(0, center-half), Hi: min(1, center+half)}, true
}
