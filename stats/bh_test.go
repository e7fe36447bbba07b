package stats

import (
	"math"
	"testing"
)

func TestBenjaminiHochberg(t *testing.T) {
	// The 15 p-values of Benjamini and Hochberg's 1995 paper; the q-values
	// are R's p.adjust(p, "BH"). At q < 0.05 the first four are rejected,
	// as in the paper.
	p := []float64{0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0}
	want := []float64{0.0015, 0.003, 0.0095, 0.035625, 0.0603, 0.06385714, 0.06385714, 0.0645, 0.0765, 0.486, 0.58118182, 0.714875, 0.75323077, 0.81321429, 1}
	// Shuffled input keeps its order in the output.
	perm := []int{14, 3, 0, 9, 5, 12, 1, 7, 10, 2, 13, 4, 8, 11, 6}
	shuffled := make([]float64, len(p))
	for i, j := range perm {
		shuffled[i] = p[j]
	}
	q := BenjaminiHochberg(shuffled)
	for i, j := range perm {
		if math.Abs(q[i]-want[j]) > 1e-8 {
			t.Errorf("q of p = %v: %v, want %v", p[j], q[i], want[j])
		}
	}
	if q := BenjaminiHochberg(nil); len(q) != 0 {
		t.Errorf("no tests: %v", q)
	}
	// Ties share their q-value.
	if q := BenjaminiHochberg([]float64{0.01, 0.01, 0.04}); q[0] != 0.015 || q[1] != 0.015 || q[2] != 0.04 {
		t.Errorf("ties: %v", q)
	}
}
