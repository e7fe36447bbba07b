package stats

import "math"

// OddsRatio is the odds ratio of a 2×2 table with its confidence interval.
type OddsRatio struct {
	Value float64
	Interval
	// Corrected is set when a cell was zero and 0.5 was added to every
	// cell (the Haldane-Anscombe correction) to keep the ratio finite.
	Corrected bool
}

// NewOddsRatio returns the odds ratio (a·d)/(b·c) of the table
//
//	a b
//	c d
//
// with Woolf's interval exp(log OR ± z·sqrt(1/a + 1/b + 1/c + 1/d)) for the
// normal quantile z (Z95 for 95%). When any cell is zero, every cell gets
// 0.5 first (Haldane-Anscombe), so that a mode never seen in successful
// runs still gets a finite, if wide, ratio.
func NewOddsRatio(a, b, c, d int, z float64) OddsRatio {
	fa, fb, fc, fd := float64(a), float64(b), float64(c), float64(d)
	var or OddsRatio
	if a == 0 || b == 0 || c == 0 || d == 0 {
		fa, fb, fc, fd = fa+0.5, fb+0.5, fc+0.5, fd+0.5
		or.Corrected = true
	}
	logOR := math.Log(fa*fd) - math.Log(fb*fc)
	se := math.Sqrt(1/fa + 1/fb + 1/fc + 1/fd)
	or.Value = math.Exp(logOR)
	or.Lo, or.Hi = math.Exp(logOR-z*se), math.Exp(logOR+z*se)
	return or
}

// Phi is the phi coefficient of the 2×2 table [[a, b], [c, d]], Pearson's
// correlation of two binary variables: (ad - bc) / sqrt of the product of
// the four margins. Undefined when a margin is empty (one variable constant).
func Phi(a, b, c, d int) (float64, bool) {
	den := float64(a+b) * float64(c+d) * float64(a+c) * float64(b+d)
	if den == 0 {
		return 0, false
	}
	return (float64(a)*float64(d) - float64(b)*float64(c)) / math.Sqrt(den), true
}
