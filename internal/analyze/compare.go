package analyze

import (
	"github.com/faultline/faultline/stats"
	"github.com/faultline/faultline/taxonomy"
)

// Comparison sets two groups side by side (two models, two versions of an
// agent, two runs), with a test for every difference.
type Comparison struct {
	A string `json:"a"`
	B string `json:"b"`
	// Success compares the success rates over decided outcomes.
	Success Contrast `json:"success"`
	// Density compares the distinct MAST modes per failed trace.
	Density DensityContrast `json:"density"`
	// Modes compares each mode's prevalence over all traces, for every mode
	// present in either group, in taxonomy order.
	Modes []ComparedMode `json:"modes"`
}

// Contrast is one proportion in the two groups: Fisher's exact test, the
// odds ratio (A over B) and which group is significantly higher ("a", "b",
// or "" when neither is).
type Contrast struct {
	A          Proportion    `json:"a"`
	B          Proportion    `json:"b"`
	Difference *float64      `json:"difference"` // A's share minus B's
	OddsRatio  *OddsRatio    `json:"odds_ratio"`
	Test       *Significance `json:"test"`
	Higher     string        `json:"higher"`
}

// ComparedMode is one mode's prevalence in the two groups.
type ComparedMode struct {
	Mode string `json:"mode"`
	Name string `json:"name"`
	Contrast
}

// DensityContrast compares failure densities with Welch's t test.
type DensityContrast struct {
	A          Mean          `json:"a"`
	B          Mean          `json:"b"`
	Difference *float64      `json:"difference"` // A's mean minus B's
	T          *float64      `json:"t"`
	DF         *float64      `json:"df"`
	Test       *Significance `json:"test"`
	Higher     string        `json:"higher"`
}

func compare(a, b *Group, tests *family) *Comparison {
	cmp := &Comparison{A: a.Name, B: b.Name, Modes: []ComparedMode{}}
	cmp.Success = contrast(a.SuccessRate, b.SuccessRate, tests)
	cmp.Density = DensityContrast{A: a.Density.Failed, B: b.Density.Failed}
	ma, okA := a.failedDensity.Mean()
	mb, okB := b.failedDensity.Mean()
	if okA && okB {
		cmp.Density.Difference = stats.Round4(ma - mb)
	}
	if t, ok := stats.WelchT(a.failedDensity, b.failedDensity); ok {
		cmp.Density.T, cmp.Density.DF = ptr(significant4(t.T)), ptr(significant4(t.DF))
		cmp.Density.Test = tests.add(t.P)
	}
	for _, mode := range taxonomy.MAST.Modes {
		pa, pb := a.Mode(mode.Code).All, b.Mode(mode.Code).All
		if pa.K+pb.K == 0 {
			continue
		}
		cmp.Modes = append(cmp.Modes, ComparedMode{Mode: mode.Code, Name: mode.Name, Contrast: contrast(pa, pb, tests)})
	}
	return cmp
}

// contrast tests one proportion in two groups; untested when either group
// has no traces to count.
func contrast(a, b Proportion, tests *family) Contrast {
	ct := Contrast{A: a, B: b}
	sa, okA := a.Share()
	sb, okB := b.Share()
	if !okA || !okB {
		return ct
	}
	ct.Difference = stats.Round4(sa - sb)
	ct.OddsRatio = newOddsRatio(a.K, a.N-a.K, b.K, b.N-b.K)
	ct.Test = tests.add(stats.FisherExact(a.K, a.N-a.K, b.K, b.N-b.K))
	return ct
}

// classify says which group is significantly higher, once q-values are known.
func (cmp *Comparison) classify(alpha float64) {
	higher := func(test *Significance, diff *float64) string {
		switch {
		case test == nil || test.Q >= alpha:
			return ""
		case *diff > 0:
			return "a"
		case *diff < 0:
			return "b"
		}
		return ""
	}
	cmp.Success.Higher = higher(cmp.Success.Test, cmp.Success.Difference)
	cmp.Density.Higher = higher(cmp.Density.Test, cmp.Density.Difference)
	for i := range cmp.Modes {
		m := &cmp.Modes[i].Contrast
		m.Higher = higher(m.Test, m.Difference)
	}
}
