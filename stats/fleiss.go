package stats

// FleissTable gathers what Fleiss' kappa needs of a set of items, each put
// by the same number of raters into one of a fixed set of categories: the
// number of items, the sum over items of the squared count of each
// category, and each category's total. Items can be added with a weight
// (how many times a bootstrap resample drew them), so that a resample
// costs a pass over the items rather than a new table.
type FleissTable struct {
	raters  int
	items   float64
	squares float64   // Σ over items and categories of n_ij²
	totals  []float64 // Σ over items of n_ij, by category
}

// NewFleissTable starts a table for items rated by raters raters into
// categories categories.
func NewFleissTable(raters, categories int) *FleissTable {
	return &FleissTable{raters: raters, totals: make([]float64, categories)}
}

// Add counts an item weight times: counts[j] raters put it in category j.
// The counts must sum to the table's number of raters.
func (t *FleissTable) Add(counts []int, weight int) {
	sum := 0
	for _, c := range counts {
		sum += c
	}
	if sum != t.raters || len(counts) != len(t.totals) {
		panic("stats: a Fleiss item must be rated by every rater into the table's categories")
	}
	w := float64(weight)
	t.items += w
	for j, c := range counts {
		t.squares += w * float64(c*c)
		t.totals[j] += w * float64(c)
	}
}

// Items is the number of items added (weights included).
func (t *FleissTable) Items() float64 { return t.items }

// Kappa is Fleiss' kappa of the table (see FleissKappa).
func (t *FleissTable) Kappa() (float64, bool) {
	n := float64(t.raters)
	if t.items == 0 || t.raters < 2 {
		return 0, false
	}
	// With T = N·n ratings in all, A = Σ n_ij² − T and C = Σ_j (column j's
	// total)², the mean agreement per item is A / (T(n−1)) and chance
	// agreement C / T²; multiplied through by T²(n−1), exact counts give
	// exact results (and C = T² shows as a zero denominator).
	total := t.items * n
	a := t.squares - total
	var c float64
	for _, x := range t.totals {
		c += x * x
	}
	den := (n - 1) * (total*total - c)
	if den == 0 {
		return 0, false
	}
	return (a*total - c*(n-1)) / den, true
}

// Agreement is the mean share of agreeing rater pairs per item (Fleiss'
// P̄): 1 when every item's raters all agree.
func (t *FleissTable) Agreement() (float64, bool) {
	n := float64(t.raters)
	if t.items == 0 || t.raters < 2 {
		return 0, false
	}
	return (t.squares - t.items*n) / (t.items * n * (n - 1)), true
}

// FleissKappa returns Fleiss' kappa, the chance-corrected agreement of
// several raters who each put every item in one of k categories (Fleiss,
// 1971): counts[i][j] is how many raters put item i in category j, each row
// summing to the same number of raters n ≥ 2. With P̄ the mean over items
// of the share of rater pairs that agree, and P̄e the sum over categories
// of the squared share of all ratings in it,
//
//	kappa = (P̄ − P̄e) / (1 − P̄e)
//
// The raters need not be the same people from item to item; with two
// raters it is Scott's pi. Kappa is undefined with no items, fewer than two
// raters, or when every rating falls in one category.
func FleissKappa(counts [][]int) (float64, bool) {
	if len(counts) == 0 {
		return 0, false
	}
	raters := 0
	for _, c := range counts[0] {
		raters += c
	}
	t := NewFleissTable(raters, len(counts[0]))
	for _, row := range counts {
		t.Add(row, 1)
	}
	return t.Kappa()
}
