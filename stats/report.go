package stats

import "math"

// Level is the coverage of the intervals faultline reports: the cohort
// report's and the agreement tables' bootstrap intervals alike.
const Level = 0.95

// Round4 rounds v to four decimals, as reports print figures, without a
// negative zero; it returns a pointer, since reports give undefined figures
// as nil.
func Round4(v float64) *float64 {
	r := math.Round(v*1e4) / 1e4
	if r == 0 {
		r = 0 // no -0 in the output
	}
	return &r
}
