package stats

import (
	"math"
	"slices"
	"testing"
)

func TestQuantile(t *testing.T) {
	// Expected values are R's quantile(x, p, type = 7), which NumPy's
	// percentile also gives.
	tests := []struct {
		sorted []float64
		p      float64
		want   float64
	}{
		{[]float64{1, 2, 3, 4}, 0.25, 1.75},
		{[]float64{1, 2, 3, 4}, 0.5, 2.5},
		{[]float64{1, 1, 2, 3, 4, 5, 6, 9}, 0.025, 1},
		{[]float64{1, 1, 2, 3, 4, 5, 6, 9}, 0.975, 8.475},
		{[]float64{1, 2, 3, 4}, 0, 1},
		{[]float64{1, 2, 3, 4}, 1, 4},
		{[]float64{7}, 0.3, 7},
	}
	for _, tt := range tests {
		if got := Quantile(tt.sorted, tt.p); math.Abs(got-tt.want) > eps {
			t.Errorf("Quantile(%v, %v) = %v, want %v", tt.sorted, tt.p, got, tt.want)
		}
	}
}

func TestPercentileInterval(t *testing.T) {
	values := []float64{9, 1, 6, 2, 5, 1, 4, 3} // sorted in place
	got, ok := PercentileInterval(values, 0.95)
	if !ok || math.Abs(got.Lo-1) > eps || math.Abs(got.Hi-8.475) > eps {
		t.Errorf("PercentileInterval = %+v, %v; want {1 8.475}", got, ok)
	}
	if !slices.IsSorted(values) {
		t.Error("values not sorted")
	}
	if _, ok := PercentileInterval(nil, 0.95); ok {
		t.Error("interval of no values is defined")
	}
}

func TestResample(t *testing.T) {
	var first [][]int
	Resample(5, 3, 42, func(counts []int) {
		sum := 0
		for _, c := range counts {
			sum += c
		}
		if len(counts) != 5 || sum != 5 {
			t.Errorf("counts %v: want 5 units drawn 5 times in all", counts)
		}
		first = append(first, slices.Clone(counts))
	})
	if len(first) != 3 {
		t.Fatalf("%d replicates, want 3", len(first))
	}
	i := 0
	Resample(5, 3, 42, func(counts []int) {
		if !slices.Equal(counts, first[i]) {
			t.Errorf("replicate %d with the same seed: %v, first time %v", i, counts, first[i])
		}
		i++
	})
	same := true
	i = 0
	Resample(5, 3, 43, func(counts []int) {
		same = same && slices.Equal(counts, first[i])
		i++
	})
	if same {
		t.Error("another seed gave the same resamples")
	}
	Resample(0, 2, 1, func(counts []int) {
		if len(counts) != 0 {
			t.Errorf("no units: counts %v", counts)
		}
	})
}

// TestBootstrapProportion checks the whole percentile bootstrap on a case
// with a known answer: a proportion of 0.5 over 100 units has a standard
// error of 0.05, so its 95% interval is close to 0.5 ± 1.96·0.05.
func TestBootstrapProportion(t *testing.T) {
	const n = 100
	var means []float64
	Resample(n, 4000, 1, func(counts []int) {
		ones := 0
		for i, c := range counts {
			if i%2 == 0 {
				ones += c
			}
		}
		means = append(means, float64(ones)/n)
	})
	iv, ok := PercentileInterval(means, 0.95)
	if !ok || math.Abs(iv.Lo-0.402) > 0.015 || math.Abs(iv.Hi-0.598) > 0.015 {
		t.Errorf("95%% interval of a proportion 0.5 of 100 = %+v, want about [0.402, 0.598]", iv)
	}
}

func TestOnce(t *testing.T) {
	for _, n := range []int{0, 1, 4} {
		got := Once(n)
		if len(got) != n || slices.ContainsFunc(got, func(c int) bool { return c != 1 }) {
			t.Errorf("Once(%d) = %v", n, got)
		}
	}
}
