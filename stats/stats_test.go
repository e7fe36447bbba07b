package stats

import (
	"math"
	"testing"
)

const eps = 1e-12

func TestCohenKappa(t *testing.T) {
	tests := []struct {
		name   string
		m      [][]float64
		want   float64
		wantOK bool
	}{
		// The worked examples of Wikipedia's "Cohen's kappa" article: 50
		// proposals read by two readers, then two tables with the same
		// agreement (60%) but different marginals and so different kappas.
		{"wikipedia 50 proposals", [][]float64{{20, 5}, {10, 15}}, 0.4, true},
		{"same agreement, balanced", [][]float64{{45, 15}, {25, 15}}, 3.0 / 23, true},
		{"same agreement, unbalanced", [][]float64{{25, 35}, {5, 35}}, 7.0 / 27, true},
		// Three categories, hand-checked: po = 70/100, pe = (50·60 + 30·30 + 20·10)/100² = 0.41,
		// kappa = 0.29/0.59.
		{"three categories", [][]float64{{44, 5, 1}, {7, 20, 3}, {9, 5, 6}}, 29.0 / 59, true},
		{"proportions give the same kappa", [][]float64{{0.4, 0.1}, {0.2, 0.3}}, 0.4, true},
		{"perfect agreement", [][]float64{{5, 0}, {0, 5}}, 1, true},
		{"perfect disagreement", [][]float64{{0, 5}, {5, 0}}, -1, true},
		// One rater never says yes: agreement is exactly what chance gives.
		{"one rater constant", [][]float64{{0, 0}, {3, 7}}, 0, true},
		{"both constant, same category: undefined", [][]float64{{0, 0}, {0, 10}}, 0, false},
		{"both constant, other category: undefined", [][]float64{{10, 0}, {0, 0}}, 0, false},
		{"no items: undefined", [][]float64{{0, 0}, {0, 0}}, 0, false},
		{"empty matrix: undefined", [][]float64{}, 0, false},
	}
	for _, tt := range tests {
		got, ok := CohenKappa(tt.m)
		if ok != tt.wantOK || math.Abs(got-tt.want) > eps {
			t.Errorf("%s: CohenKappa = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestCohenKappaPanicsOnRaggedMatrix(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	CohenKappa([][]float64{{1, 2}, {3}})
}

// result is a statistic that may be undefined, for table-driven tests.
type result struct {
	v  float64
	ok bool
}

func res(v float64, ok bool) result { return result{v, ok} }

func undefined() result { return result{} }

func TestConfusion(t *testing.T) {
	tests := []struct {
		name                             string
		c                                Confusion
		precision, recall, f1, acc, kapp result
	}{
		// Hand-checked: P = 20/25, R = 20/30, F1 = 40/55; the same table as
		// Wikipedia's kappa example, read as prediction vs reference.
		{"ordinary", Confusion{TP: 20, FP: 5, FN: 10, TN: 15},
			res(0.8, true), res(2.0/3, true), res(40.0/55, true), res(0.7, true), res(0.4, true)},
		{"all agree, both classes", Confusion{TP: 3, TN: 7},
			res(1, true), res(1, true), res(1, true), res(1, true), res(1, true)},
		// Nobody says present anywhere: nothing to find, nothing predicted.
		{"all agree absent", Confusion{TN: 19},
			undefined(), undefined(), undefined(), res(1, true), undefined()},
		{"all agree present", Confusion{TP: 4},
			res(1, true), res(1, true), res(1, true), res(1, true), undefined()},
		// A silent detector against a reference with positives.
		{"predicts nothing", Confusion{FN: 5, TN: 14},
			undefined(), res(0, true), res(0, true), res(14.0/19, true), res(0, true)},
		// Predictions on a reference with no positives.
		{"reference has no positives", Confusion{FP: 2, TN: 8},
			res(0, true), undefined(), res(0, true), res(0.8, true), res(0, true)},
		{"empty", Confusion{}, undefined(), undefined(), undefined(), undefined(), undefined()},
	}
	for _, tt := range tests {
		for _, m := range []struct {
			name string
			want result
			got  func() (float64, bool)
		}{
			{"precision", tt.precision, tt.c.Precision},
			{"recall", tt.recall, tt.c.Recall},
			{"F1", tt.f1, tt.c.F1},
			{"accuracy", tt.acc, tt.c.Accuracy},
			{"kappa", tt.kapp, tt.c.Kappa},
		} {
			v, ok := m.got()
			if ok != m.want.ok || (ok && math.Abs(v-m.want.v) > eps) {
				t.Errorf("%s: %s = %v, %v; want %v, %v", tt.name, m.name, v, ok, m.want.v, m.want.ok)
			}
		}
	}
}

func TestConfusionAdd(t *testing.T) {
	got := Confusion{TP: 1, FP: 2, FN: 3, TN: 4}.Add(Confusion{TP: 10, FP: 20, FN: 30, TN: 40})
	if got != (Confusion{TP: 11, FP: 22, FN: 33, TN: 44}) || got.N() != 110 {
		t.Errorf("Add = %+v", got)
	}
}
