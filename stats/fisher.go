package stats

import "math"

// FisherExact returns the two-sided p-value of Fisher's exact test for the
// 2×2 table
//
//	a b
//	c d
//
// conditioning on its margins: the sum of the hypergeometric probabilities
// of every table with those margins that is no more likely than the one
// observed. This is the two-sided rule R's fisher.test uses, including its
// relative tolerance of 1e-7, so that tables exactly as likely as the
// observed one count despite rounding. A table with an empty row or column
// has only one possible arrangement, so p is 1.
func FisherExact(a, b, c, d int) float64 {
	if a < 0 || b < 0 || c < 0 || d < 0 {
		panic("stats: FisherExact needs non-negative counts")
	}
	n := a + b + c + d
	row, col := a+b, a+c
	lo, hi := max(0, row+col-n), min(row, col)
	if lo == hi {
		return 1
	}
	logP := func(x int) float64 {
		return logChoose(col, x) + logChoose(n-col, row-x) - logChoose(n, row)
	}
	limit := logP(a) + math.Log1p(1e-7)
	// The sum starts at the most likely table and walks out to each side
	// with the ratio of successive probabilities, P(x+1)/P(x) = (row-x)
	// (col-x) / ((x+1)(n-row-col+x+1)), which costs one logarithm a step
	// instead of several log-gammas. On a cohort of a million traces the
	// support is a million tables wide, but the probabilities fall ever
	// faster away from the mode (the distribution is log-concave), so a
	// side stops once all that is left of it, at most a geometric series
	// of its last term and ratio, is too small to change the sum.
	mode := min(max(int(float64(row+1)*float64(col+1)/float64(n+2)), lo), hi)
	p := 0.0
	add := func(logp float64) {
		if logp <= limit {
			p += math.Exp(logp)
		}
	}
	done := func(logp, ratio float64) bool {
		if logp > limit || ratio >= 0 {
			return false
		}
		rest := math.Exp(logp+ratio) / -math.Expm1(ratio)
		return rest <= p*0x1p-60 || logp < minLogTerm
	}
	atMode := logP(mode)
	add(atMode)
	for x, logp := mode, atMode; x < hi; x++ {
		ratio := stepRatio(n, row, col, x)
		logp += ratio
		add(logp)
		if done(logp, stepRatio(n, row, col, min(x+1, hi-1))) {
			break
		}
	}
	for x, logp := mode, atMode; x > lo; x-- {
		ratio := -stepRatio(n, row, col, x-1)
		logp += ratio
		add(logp)
		if done(logp, -stepRatio(n, row, col, max(x-2, lo))) {
			break
		}
	}
	return min(p, 1)
}

// minLogTerm is the log of a probability too small to add anything to a
// float64 sum (it rounds to 0).
const minLogTerm = -746

// stepRatio is log P(x+1) - log P(x) for the hypergeometric distribution of
// the top-left cell of a 2×2 table with n items, row and col as its first
// row's and first column's totals.
func stepRatio(n, row, col, x int) float64 {
	return math.Log(float64(row-x)) + math.Log(float64(col-x)) - math.Log(float64(x+1)) - math.Log(float64(n-row-col+x+1))
}

// logChoose is log(n choose k).
func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
