package stats

import (
	"math"
	"testing"
)

func TestFleissKappa(t *testing.T) {
	// The worked example of Fleiss' kappa (Wikipedia, after Fleiss 1971's
	// layout): 14 raters put 10 items in 5 categories. P̄ = 0.378,
	// P̄e = 0.213, kappa = 0.210.
	example := [][]int{
		{0, 0, 0, 0, 14},
		{0, 2, 6, 4, 2},
		{0, 0, 3, 5, 6},
		{0, 3, 9, 2, 0},
		{2, 2, 8, 1, 1},
		{7, 7, 0, 0, 0},
		{3, 2, 6, 3, 0},
		{2, 5, 3, 2, 2},
		{6, 5, 2, 1, 0},
		{0, 2, 2, 3, 7},
	}
	got, ok := FleissKappa(example)
	if !ok || math.Abs(got-0.20993070442195522) > 1e-12 {
		t.Errorf("kappa = %v, %v; want 0.20993", got, ok)
	}
	table := NewFleissTable(14, 5)
	for _, row := range example {
		table.Add(row, 1)
	}
	if p, ok := table.Agreement(); !ok || math.Abs(p-0.378021978021978) > 1e-12 {
		t.Errorf("P̄ = %v, %v; want 0.37802", p, ok)
	}

	// With two raters, Fleiss' kappa is Scott's pi: observed agreement 0.7,
	// pooled shares 0.45 and 0.55, chance 0.505, pi = 0.195/0.495.
	two := [][]int{}
	for range 3 {
		two = append(two, []int{2, 0}) // both yes
	}
	for range 4 {
		two = append(two, []int{0, 2}) // both no
	}
	for range 3 {
		two = append(two, []int{1, 1}) // split
	}
	if got, ok := FleissKappa(two); !ok || math.Abs(got-0.195/0.495) > 1e-12 {
		t.Errorf("two raters: %v, %v; want Scott's pi %v", got, ok, 0.195/0.495)
	}

	// Perfect agreement is 1; agreement no better than chance 0 or less.
	if got, ok := FleissKappa([][]int{{3, 0}, {0, 3}, {3, 0}}); !ok || got != 1 {
		t.Errorf("perfect agreement: %v, %v", got, ok)
	}
	if got, ok := FleissKappa([][]int{{2, 1}, {1, 2}}); !ok || got >= 0 {
		t.Errorf("split items: %v, %v", got, ok)
	}

	// Weighting an item counts it again.
	w := NewFleissTable(2, 2)
	w.Add([]int{2, 0}, 3)
	w.Add([]int{0, 2}, 4)
	w.Add([]int{1, 1}, 3)
	if got, _ := w.Kappa(); math.Abs(got-0.195/0.495) > 1e-12 || w.Items() != 10 {
		t.Errorf("weighted: %v over %v items", got, w.Items())
	}

	// Undefined: no items, one rater, every rating in one category.
	for name, counts := range map[string][][]int{"no items": nil, "one rater": {{1, 0}, {0, 1}}, "one category": {{3, 0}, {3, 0}}} {
		if _, ok := FleissKappa(counts); ok {
			t.Errorf("%s: kappa defined", name)
		}
	}
}
