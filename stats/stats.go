// Package stats holds the statistics faultline computes itself, with the
// standard library only: agreement between two raters (Cohen's kappa,
// precision, recall, F1) and among several (Fleiss' kappa), bootstrap
// confidence intervals, and what the cohort report needs: Wilson intervals
// for proportions, Fisher's exact test, odds ratios, the Benjamini-Hochberg
// adjustment, Student t intervals and tests, and a one-way analysis of
// variance.
//
// A statistic whose formula divides by zero on the data at hand (precision
// with no predicted positives, kappa when chance agreement is certain) is
// undefined: functions return ok == false rather than NaN, so callers have
// to decide how to say so.
package stats

// Confusion counts how a binary prediction agrees with a binary reference,
// one item at a time: TP predicted and present, FP predicted but absent, FN
// missed, TN absent and not predicted.
type Confusion struct {
	TP, FP, FN, TN int
}

// N is the number of items counted.
func (c Confusion) N() int { return c.TP + c.FP + c.FN + c.TN }

// Add returns the sum of two tables, as pooling their items does.
func (c Confusion) Add(o Confusion) Confusion {
	return Confusion{TP: c.TP + o.TP, FP: c.FP + o.FP, FN: c.FN + o.FN, TN: c.TN + o.TN}
}

// Precision is TP / (TP + FP), the share of predictions that are right;
// undefined when nothing was predicted.
func (c Confusion) Precision() (float64, bool) { return ratio(c.TP, c.TP+c.FP) }

// Recall is TP / (TP + FN), the share of reference positives found;
// undefined when the reference has no positives.
func (c Confusion) Recall() (float64, bool) { return ratio(c.TP, c.TP+c.FN) }

// F1 is the harmonic mean of precision and recall, 2TP / (2TP + FP + FN).
// It is defined whenever either side has a positive, even when precision or
// recall alone is not (then it is 0); it is undefined when neither has one.
func (c Confusion) F1() (float64, bool) { return ratio(2*c.TP, 2*c.TP+c.FP+c.FN) }

// Accuracy is the share of items on which prediction and reference agree
// (observed agreement); undefined on an empty table.
func (c Confusion) Accuracy() (float64, bool) { return ratio(c.TP+c.TN, c.N()) }

// Kappa is Cohen's kappa of the table read as two raters' 2×2 agreement
// matrix (see CohenKappa).
func (c Confusion) Kappa() (float64, bool) {
	return CohenKappa([][]float64{
		{float64(c.TP), float64(c.FP)},
		{float64(c.FN), float64(c.TN)},
	})
}

func ratio(num, den int) (float64, bool) {
	if den == 0 {
		return 0, false
	}
	return float64(num) / float64(den), true
}

// CohenKappa returns Cohen's kappa, chance-corrected agreement between two
// raters who each put every item in one of k categories: m[i][j] counts the
// items the first rater put in category i and the second in j (counts or
// proportions; kappa does not depend on scale). With observed agreement po
// (the diagonal's share) and chance agreement pe (the sum over categories of
// the product of the two raters' marginal shares),
//
//	kappa = (po - pe) / (1 - pe)
//
// 1 is perfect agreement, 0 what chance alone gives, negative less.
// Kappa is undefined when there are no items, or when pe is 1: both raters
// put every item in the same single category, so agreement is certain and
// says nothing. m must be square with non-negative entries.
func CohenKappa(m [][]float64) (float64, bool) {
	k := len(m)
	rows := make([]float64, k)
	cols := make([]float64, k)
	var n, diag float64
	for i, row := range m {
		if len(row) != k {
			panic("stats: CohenKappa needs a square matrix")
		}
		for j, v := range row {
			rows[i] += v
			cols[j] += v
			n += v
		}
		diag += row[i]
	}
	// Multiplied through by n², so that exact counts give exact zeros
	// (pe = 1 shows up as a zero denominator, not as 1e-17).
	var chance float64
	for i := range k {
		chance += rows[i] * cols[i]
	}
	den := n*n - chance
	if n == 0 || den == 0 {
		return 0, false
	}
	return (n*diag - chance) / den, true
}
