package stats

import (
	"math"
	"math/rand/v2"
	"sort"
)

// Once counts every one of n units once: the sample itself, in the form
// Resample gives its resamples, for the point estimate.
func Once(n int) []int {
	counts := make([]int, n)
	for i := range counts {
		counts[i] = 1
	}
	return counts
}

// Resample draws replicates bootstrap resamples of n units (n draws with
// replacement each) and calls fn with, for every unit, how many times it was
// drawn. Resampling whole units (traces, say) rather than the items inside
// them keeps the items of one unit together, as they are not independent.
// The same seed gives the same resamples with the same Go release.
// counts is reused between calls: fn must not keep it.
func Resample(n, replicates int, seed uint64, fn func(counts []int)) {
	units := make([]int32, n)
	for i := range units {
		units[i] = int32(i)
	}
	ResampleGroups(units, n, replicates, seed, fn)
}

// ResampleGroups is Resample for units that fall in groups, units[i] being
// the group of unit i (0 ≤ units[i] < groups), where all that counts is
// how many draws fell in each group: fn gets those counts. The draws are
// Resample's, so the counts are its counts summed by group, without a pass
// over the units per resample.
func ResampleGroups(units []int32, groups, replicates int, seed uint64, fn func(counts []int)) {
	// The second half of PCG's seed is a fixed constant, so that users
	// choose one number.
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	counts := make([]int, groups)
	n := len(units)
	for range replicates {
		clear(counts)
		for range n {
			counts[units[r.IntN(n)]]++
		}
		fn(counts)
	}
}

// Interval is a confidence interval.
type Interval struct {
	Lo, Hi float64
}

// PercentileInterval returns the central interval holding the given share
// of values (0.95 for a 95% interval): the (1-level)/2 and (1+level)/2
// quantiles, as the percentile bootstrap takes them from its replicates.
// It is undefined for no values. values is sorted in place.
func PercentileInterval(values []float64, level float64) (Interval, bool) {
	if len(values) == 0 {
		return Interval{}, false
	}
	sort.Float64s(values)
	tail := (1 - level) / 2
	return Interval{Lo: Quantile(values, tail), Hi: Quantile(values, 1-tail)}, true
}

// Quantile returns the p-quantile (0 ≤ p ≤ 1) of sorted, non-empty values,
// interpolating linearly between order statistics: the definition R calls
// type 7 and NumPy uses by default, so results can be checked against either.
func Quantile(sorted []float64, p float64) float64 {
	h := p * float64(len(sorted)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}
