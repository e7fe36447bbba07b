package analyze

import (
	"sort"

	"github.com/faultline/faultline/taxonomy"
)

// Recommendation is an intervention, from the taxonomy's mapping of modes
// to fixes, that addresses some of a group's fatal modes.
type Recommendation struct {
	Rank         int    `json:"rank"`
	Intervention string `json:"intervention"` // the taxonomy's id
	Name         string `json:"name"`
	Description  string `json:"description"`
	// Modes are the fatal modes it addresses, with the figures that made
	// them fatal.
	Modes []*ModeStats `json:"modes"`
	// Failed is the failed traces of the group with any of those modes:
	// the failures the intervention goes after.
	Failed Proportion `json:"failed"`
	// Examples are up to three of those traces, to read first.
	Examples []string `json:"examples"`
}

// maxExamples is how many example traces a recommendation names.
const maxExamples = 3

// recommend ranks the interventions for a group's fatal modes: those that
// reach the most failed traces first, then those with the strongest
// evidence (lowest q).
func (c *cohort) recommend(g *Group, idx []int32) []Recommendation {
	byID := map[string]*Recommendation{}
	masks := map[string]uint16{}
	best := map[string]float64{}
	var out []*Recommendation
	for _, m := range g.Modes {
		if m.Class != Fatal {
			continue
		}
		mode, _ := taxonomy.MAST.Mode(m.Mode)
		r := byID[mode.Intervention]
		if r == nil {
			iv, _ := taxonomy.MAST.Intervention(mode.Intervention)
			r = &Recommendation{Intervention: iv.ID, Name: iv.Name, Description: iv.Description, Examples: []string{}}
			byID[iv.ID] = r
			best[iv.ID] = m.Test.Q
			out = append(out, r)
		}
		r.Modes = append(r.Modes, m)
		masks[r.Intervention] |= 1 << m.bit
		best[r.Intervention] = min(best[r.Intervention], m.Test.Q)
	}
	for _, r := range out {
		r.Failed.N = g.Failed
		mask := masks[r.Intervention]
		for _, i := range idx {
			m := &c.members[i]
			if m.outcome != failed || m.modes&mask == 0 {
				continue
			}
			r.Failed.K++
			if len(r.Examples) < maxExamples {
				r.Examples = append(r.Examples, c.data.ID(&c.data.Traces[m.trace]))
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Failed.K != b.Failed.K {
			return a.Failed.K > b.Failed.K
		}
		if best[a.Intervention] != best[b.Intervention] {
			return best[a.Intervention] < best[b.Intervention]
		}
		return a.Intervention < b.Intervention
	})
	recs := make([]Recommendation, len(out))
	for i, r := range out {
		r.Rank = i + 1
		recs[i] = *r
	}
	return recs
}
