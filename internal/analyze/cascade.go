package analyze

import (
	"math/bits"
	"sort"

	"github.com/faultline/faultline/stats"
	"github.com/faultline/faultline/taxonomy"
)

// Cascades describe, in the failed traces of a group, the order in which
// MAST modes first appear: which mode comes first (the onset), which
// follows which, and whether the onset says how many more will follow
// (the study's "cascading collapse": an early mismatch poisoning the rest).
// A mode's first appearance is the earliest step that a finding of it
// cites first; modes that no finding locates are left out of the order
// and counted in Unlocated.
type Cascades struct {
	Failed    int `json:"failed"`    // failed traces with at least one MAST mode
	Ordered   int `json:"ordered"`   // of which with at least one located mode: the cascades
	Unlocated int `json:"unlocated"` // modes on failed traces left out for want of a location
	// Ties counts cascades where two modes first appear at the same step;
	// they are ordered by code then.
	Ties        int          `json:"ties"`
	Onsets      []Onset      `json:"onsets"`      // most frequent first
	Transitions []Transition `json:"transitions"` // A directly before B, most frequent first
	// OnsetTest is a one-way analysis of variance of the number of modes
	// that follow, by onset mode; nil when there is nothing to compare.
	OnsetTest *OnsetTest `json:"onset_test"`
}

// Onset is a mode that came first in some cascades.
type Onset struct {
	Mode      string `json:"mode"`
	Name      string `json:"name"`
	Traces    int    `json:"traces"`
	Followers Mean   `json:"followers"` // modes that came after it
}

// Transition counts cascades in which From came directly before To.
type Transition struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Count int    `json:"count"`
}

// OnsetTest says whether the onset mode predicts how many modes follow.
type OnsetTest struct {
	F          float64       `json:"f"`
	DF1        float64       `json:"df1"`
	DF2        float64       `json:"df2"`
	EtaSquared float64       `json:"eta_squared"` // share of the variation the onset explains
	Test       *Significance `json:"test"`
}

func (c *cohort) cascades(idx []int32, tests *family) Cascades {
	cs := Cascades{Onsets: []Onset{}, Transitions: []Transition{}}
	var followers [16]stats.Running
	var transitions [16][16]int
	order := make([]int, 0, 16)
	for _, i := range idx {
		m := &c.members[i]
		if m.outcome != failed || m.modes == 0 {
			continue
		}
		cs.Failed++
		first := c.marks.of(m.trace).first
		order = order[:0]
		for b := m.modes; b != 0; b &= b - 1 {
			k := bits.TrailingZeros16(b)
			if first[k] == 0 {
				cs.Unlocated++
				continue
			}
			order = append(order, k)
		}
		if len(order) == 0 {
			continue
		}
		cs.Ordered++
		// Bits come in code order, so a stable sort by step breaks ties by
		// code: an insertion sort, stable and, on at most 16 modes, cheaper
		// than sort's on a million traces.
		for j := 1; j < len(order); j++ {
			for at := j; at > 0 && first[order[at]] < first[order[at-1]]; at-- {
				order[at], order[at-1] = order[at-1], order[at]
			}
		}
		tie := false
		for j := 1; j < len(order); j++ {
			transitions[order[j-1]][order[j]]++
			tie = tie || first[order[j-1]] == first[order[j]]
		}
		if tie {
			cs.Ties++
		}
		followers[order[0]].Add(float64(len(order) - 1))
	}
	var samples []stats.Running
	for k, f := range followers {
		if f.N() == 0 {
			continue
		}
		samples = append(samples, f)
		mode := taxonomy.MAST.Modes[k]
		cs.Onsets = append(cs.Onsets, Onset{Mode: mode.Code, Name: mode.Name, Traces: f.N(), Followers: newMean(f, 0, float64(len(taxonomy.MAST.Modes)-1))})
	}
	sort.SliceStable(cs.Onsets, func(a, b int) bool { return cs.Onsets[a].Traces > cs.Onsets[b].Traces })
	for from := range transitions {
		for to, n := range transitions[from] {
			if n > 0 {
				cs.Transitions = append(cs.Transitions, Transition{From: taxonomy.MAST.Modes[from].Code, To: taxonomy.MAST.Modes[to].Code, Count: n})
			}
		}
	}
	sort.SliceStable(cs.Transitions, func(a, b int) bool { return cs.Transitions[a].Count > cs.Transitions[b].Count })
	if a, ok := stats.OneWayANOVA(samples); ok {
		cs.OnsetTest = &OnsetTest{F: significant4(a.F), DF1: a.DF1, DF2: a.DF2, EtaSquared: *stats.Round4(a.EtaSquared), Test: tests.add(a.P)}
	}
	return cs
}
