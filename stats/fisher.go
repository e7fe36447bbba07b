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
	m := marginsOf(a, b, c, d)
	if m.lo == m.hi {
		return 1
	}
	limit := m.limit(a)
	// The sum starts at the most likely table and walks out to each side
	// with the ratio of successive probabilities, P(x+1)/P(x) = (row-x)
	// (col-x) / ((x+1)(n-row-col+x+1)), which costs one logarithm a step
	// instead of several log-gammas. On a cohort of a million traces the
	// support is a million tables wide, but the probabilities fall ever
	// faster away from the mode (the distribution is log-concave), so a
	// side stops once all that is left of it, at most a geometric series
	// of its last term and ratio, is too small to change the sum.
	mode := min(max(int(float64(m.row+1)*float64(m.col+1)/float64(m.n+2)), m.lo), m.hi)
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
	atMode := m.logP(mode)
	add(atMode)
	// walk adds the tables from the mode to end, step by step; ratio(x) is
	// the log of the next table's probability over table x's. Each ratio is
	// computed once: it ends the walk or takes it a step further.
	walk := func(step, end int, ratio func(x int) float64) {
		if mode == end {
			return
		}
		logp, r := atMode, ratio(mode)
		for x := mode; ; x += step {
			logp += r
			add(logp)
			if x+step == end {
				return
			}
			if r = ratio(x + step); done(logp, r) {
				return
			}
		}
	}
	walk(1, m.hi, m.stepRatio)
	walk(-1, m.lo, func(x int) float64 { return -m.stepRatio(x - 1) })
	return min(p, 1)
}

// minLogTerm is the log of a probability too small to add anything to a
// float64 sum (it rounds to 0).
const minLogTerm = -746

// margins are a 2×2 table's n items and its first row's and first
// column's totals, on which the hypergeometric distribution of its top-left
// cell depends, with that cell's support, lo..hi.
type margins struct{ n, row, col, lo, hi int }

func marginsOf(a, b, c, d int) margins {
	n := a + b + c + d
	row, col := a+b, a+c
	return margins{n: n, row: row, col: col, lo: max(0, row+col-n), hi: min(row, col)}
}

// logP is the log-probability of the table with these margins whose
// top-left cell is x.
func (m margins) logP(x int) float64 {
	return logChoose(m.col, x) + logChoose(m.n-m.col, m.row-x) - logChoose(m.n, m.row)
}

// limit is the log-probability up to which a table counts as no more
// likely than the observed one, whose top-left cell is a: R's relative
// tolerance of 1e-7 above its own.
func (m margins) limit(a int) float64 {
	return m.logP(a) + math.Log1p(1e-7)
}

// stepRatio is log P(x+1) - log P(x).
func (m margins) stepRatio(x int) float64 {
	return math.Log(float64(m.row-x)) + math.Log(float64(m.col-x)) - math.Log(float64(x+1)) - math.Log(float64(m.n-m.row-m.col+x+1))
}

// logChoose is log(n choose k).
func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
