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
	// Walk the support from lo in log space with the ratio of successive
	// probabilities, P(x+1)/P(x) = (row-x)(col-x) / ((x+1)(n-row-col+x+1)),
	// which costs one logarithm a step instead of several log-gammas.
	logp := logChoose(col, lo) + logChoose(n-col, row-lo) - logChoose(n, row)
	observed := logp
	for x := lo; x < a; x++ {
		observed += stepRatio(n, row, col, x)
	}
	limit := observed + math.Log1p(1e-7)
	p := 0.0
	for x := lo; ; x++ {
		if logp <= limit {
			p += math.Exp(logp)
		}
		if x == hi {
			break
		}
		logp += stepRatio(n, row, col, x)
	}
	return min(p, 1)
}

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
