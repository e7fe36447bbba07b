package analyze

import (
	"math/bits"
	"sort"

	"github.com/faultline/faultline/stats"
	"github.com/faultline/faultline/taxonomy"
)

// Pair is how two MAST modes co-occur in the traces of a group.
type Pair struct {
	A     string `json:"a"`
	B     string `json:"b"`
	Both  int    `json:"both"`   // traces with both
	WithA int    `json:"with_a"` // traces with A
	WithB int    `json:"with_b"`
	// Lift is P(A and B) / (P(A)·P(B)): above 1 the two go together more
	// often than independent modes would.
	Lift float64 `json:"lift"`
	// Phi is the correlation of the two modes' presence; nil when one is in
	// every trace of the group.
	Phi     *float64 `json:"phi"`
	BGivenA float64  `json:"b_given_a"` // P(B | A)
	AGivenB float64  `json:"a_given_b"` // P(A | B)
}

// pairs counts every pair of modes found together in the group's traces,
// most frequent first.
func (c *cohort) pairs(idx []int32) []Pair {
	var single [16]int
	var both [16][16]int
	for _, i := range idx {
		modes := c.members[i].modes
		for a := modes; a != 0; a &= a - 1 {
			x := bits.TrailingZeros16(a)
			single[x]++
			for b := a & (a - 1); b != 0; b &= b - 1 {
				both[x][bits.TrailingZeros16(b)]++
			}
		}
	}
	n := len(idx)
	out := []Pair{}
	for x := range single {
		for y := x + 1; y < len(single); y++ {
			k := both[x][y]
			if k == 0 {
				continue
			}
			p := Pair{
				A: taxonomy.MAST.Modes[x].Code, B: taxonomy.MAST.Modes[y].Code,
				Both: k, WithA: single[x], WithB: single[y],
				Lift:    *stats.Round4(float64(k) * float64(n) / (float64(single[x]) * float64(single[y]))),
				BGivenA: *stats.Round4(float64(k) / float64(single[x])),
				AGivenB: *stats.Round4(float64(k) / float64(single[y])),
			}
			if phi, ok := stats.Phi(k, single[x]-k, single[y]-k, n-single[x]-single[y]+k); ok {
				p.Phi = stats.Round4(phi)
			}
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Both != out[j].Both {
			return out[i].Both > out[j].Both
		}
		return out[i].Lift > out[j].Lift
	})
	return out
}
