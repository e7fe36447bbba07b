package stats

import (
	"math"
	"testing"
)

func TestFisherExact(t *testing.T) {
	tests := []struct {
		name       string
		a, b, c, d int
		want       float64
	}{
		// Fisher's lady tasting tea: 3 of 4 milk-first cups named right.
		{"tea tasting", 3, 1, 1, 3, 0.4857142857},
		// Wikipedia's dieting example (men 1 of 12, women 9 of 12).
		{"wikipedia dieting", 1, 9, 11, 3, 0.002759456185},
		// Perfect separation of 5 and 5: 2 of the 252 tables are as extreme.
		{"perfect separation", 0, 5, 5, 0, 2.0 / 252},
		{"the symmetric table is the likeliest", 2, 2, 2, 2, 1},
		// The study's FM-3.3 figure for Gemini: 12 of 24 failed runs, 25 of
		// 76 successful ones; hand-checked by summing hypergeometric terms.
		{"study FM-3.3", 12, 12, 25, 51, 0.1506197922},
		{"strong association", 69, 6, 9, 21, 3.403043150e-10},
		{"empty row", 0, 0, 3, 4, 1},
		{"empty column", 0, 4, 0, 7, 1},
		{"empty table", 0, 0, 0, 0, 1},
	}
	for _, tt := range tests {
		got := FisherExact(tt.a, tt.b, tt.c, tt.d)
		if math.Abs(got-tt.want) > 1e-8*tt.want {
			t.Errorf("%s: FisherExact(%d, %d, %d, %d) = %.12g, want %.12g", tt.name, tt.a, tt.b, tt.c, tt.d, got, tt.want)
		}
		// The test is symmetric in rows and in columns.
		if sym := FisherExact(tt.c, tt.d, tt.a, tt.b); math.Abs(sym-got) > 1e-12 {
			t.Errorf("%s: rows swapped give %v, want %v", tt.name, sym, got)
		}
	}
}

// TestFisherExactLarge checks a table of cohort size: no overflow, and a
// p-value that agrees with the chi-squared approximation's order of
// magnitude for a clear difference (30% vs 20% of 20,000 each).
func TestFisherExactLarge(t *testing.T) {
	p := FisherExact(6000, 14000, 4000, 16000)
	if p <= 0 || p > 1e-100 {
		t.Errorf("p = %g, want a tiny positive value", p)
	}
	if p := FisherExact(5000, 15000, 5000, 15000); math.Abs(p-1) > 1e-9 {
		t.Errorf("equal rates: p = %v, want 1", p)
	}
}

// fisherEveryTable is FisherExact summing every table of the support, from
// the least likely end: the definition, for checking the walk from the mode.
func fisherEveryTable(a, b, c, d int) float64 {
	m := marginsOf(a, b, c, d)
	if m.lo == m.hi {
		return 1
	}
	limit := m.limit(a)
	p := 0.0
	for x := m.lo; x <= m.hi; x++ {
		if l := m.logP(x); l <= limit {
			p += math.Exp(l)
		}
	}
	return min(p, 1)
}

// TestFisherExactWalk holds the walk from the mode, which stops each side
// early, to the sum over every table: small tables, tables on the edge of
// the support, tables far in a tail, and tables of cohort size.
func TestFisherExactWalk(t *testing.T) {
	var tables [][4]int
	for a := 0; a <= 6; a++ {
		for b := 0; b <= 6; b++ {
			for c := 0; c <= 6; c++ {
				for d := 0; d <= 6; d += 2 {
					tables = append(tables, [4]int{a, b, c, d})
				}
			}
		}
	}
	tables = append(tables,
		[4]int{6000, 14000, 4000, 16000},
		[4]int{5000, 15000, 5000, 15000},
		[4]int{1, 99999, 400, 99600},
		[4]int{250000, 250000, 0, 500000},
		[4]int{70000, 130000, 69000, 131000},
		[4]int{3, 1000000, 0, 7},
	)
	for _, tb := range tables {
		got, want := FisherExact(tb[0], tb[1], tb[2], tb[3]), fisherEveryTable(tb[0], tb[1], tb[2], tb[3])
		// log-gamma of a few hundred thousand is good to about 1e-9 of a
		// term, which bounds how well the two sums can agree.
		if math.Abs(got-want) > 1e-8*want && math.Abs(got-want) > 1e-300 {
			t.Errorf("%v: %.17g, every table sums to %.17g", tb, got, want)
		}
	}
}
