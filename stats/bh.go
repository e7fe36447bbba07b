package stats

import "sort"

// BenjaminiHochberg returns the q-values (adjusted p-values) of p under the
// Benjamini-Hochberg procedure: with the p-values ranked 1..m in ascending
// order, q at rank i is the smallest p(j)·m/j over ranks j ≥ i, capped at 1.
// Rejecting every test with q < α keeps the expected share of false
// discoveries among the rejections at most α. The result is in the order of
// p, as R's p.adjust(p, "BH") gives it.
func BenjaminiHochberg(p []float64) []float64 {
	m := len(p)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return p[order[i]] < p[order[j]] })
	q := make([]float64, m)
	running := 1.0
	for rank := m; rank >= 1; rank-- {
		i := order[rank-1]
		running = min(running, p[i]*float64(m)/float64(rank))
		q[i] = running
	}
	return q
}
