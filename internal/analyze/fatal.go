package analyze

import (
	"fmt"

	"github.com/faultline/faultline/stats"
)

// Classes a mode can get in a group.
const (
	Fatal           = "fatal"
	NonFatal        = "non-fatal"
	Inconclusive    = "inconclusive"
	TooFewSucceeded = "too-few-successes"
	TooFewFailed    = "too-few-failures"
	TooFewEither    = "too-few-outcomes" // short of both successes and failures
)

// Rule is how the report calls a mode fatal, non-fatal or inconclusive in a
// group. Its text is printed with every report, so a reader never has to
// guess what a verdict rests on.
type Rule struct {
	// Alpha is the q-value below which a difference counts as significant.
	Alpha float64 `json:"alpha"`
	// MinSucceeded and MinFailed are the fewest successful and failed
	// traces a group needs before its modes are called at all: below them
	// Fisher's test has next to no power and a verdict would be noise.
	MinSucceeded int `json:"min_succeeded"`
	MinFailed    int `json:"min_failed"`
	// A mode that is not fatal is called non-fatal when it is common in
	// runs that succeeded (at least BenignShare of them) and hardly more
	// common in failed ones (a lift of at most BenignLift), so that it is
	// compatible with success; a mode with a large but not significant
	// lift stays inconclusive rather than being called harmless.
	BenignShare float64 `json:"benign_share"`
	BenignLift  float64 `json:"benign_lift"`
	Text        string  `json:"text"`
}

// DefaultRule is the rule reports use unless told otherwise.
var DefaultRule = NewRule(0.05, 5, 5, 0.2, 0.25)

// NewRule makes a rule and its text.
func NewRule(alpha float64, minSucceeded, minFailed int, benignShare, benignLift float64) Rule {
	return Rule{Alpha: alpha, MinSucceeded: minSucceeded, MinFailed: minFailed, BenignShare: benignShare, BenignLift: benignLift, Text: fmt.Sprintf(
		"Each mode is called per group, on the traces with a decided outcome, once the group has at least %d successful and %d failed traces "+
			"(below that, the figures are shown and the verdicts withheld). "+
			"Fatal: more common in failed than in successful traces, with Fisher's exact test q < %g "+
			"(Benjamini-Hochberg over every test in the report). "+
			"Non-fatal (benign): not fatal, and either significantly more common in successful traces, "+
			"or present in at least %.0f%% of them and at most %.0f%% more common in failed ones. "+
			"Inconclusive: anything else, such as a large difference that is not significant.",
		minSucceeded, minFailed, alpha, 100*benignShare, 100*benignLift)}
}

// ModeStats are one MAST mode's figures in a group: its prevalence, and
// how it sets failed traces apart from successful ones.
type ModeStats struct {
	Mode      string     `json:"mode"`
	Name      string     `json:"name"`
	All       Proportion `json:"all"`       // traces of the group with the mode
	Failed    Proportion `json:"failed"`    // failed traces with it
	Succeeded Proportion `json:"succeeded"` // successful traces with it
	// Difference is the failed share minus the successful share; Lift the
	// failed share over the successful one, minus 1 (+0.52: 52% more
	// common in failures), nil when the mode is in no successful trace.
	// Both are nil when the group lacks failures or successes.
	Difference *float64 `json:"difference"`
	Lift       *float64 `json:"lift"`
	// OddsRatio is the odds of the mode in failed traces over its odds in
	// successful ones.
	OddsRatio *OddsRatio `json:"odds_ratio"`
	// Test is Fisher's exact test of failed against successful traces;
	// nil when the group has too few of either to call.
	Test  *Significance `json:"test"`
	Class string        `json:"class"`
	// NeverInSuccesses flags a mode found in failed traces and in none of
	// the group's successful ones.
	NeverInSuccesses bool `json:"never_in_successes"`

	bit int // index in taxonomy.MAST.Modes
}

// OddsRatio is an odds ratio with its 95% interval, to 4 significant digits.
type OddsRatio struct {
	Value float64 `json:"value"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	// Corrected is set when a zero cell made the report add 0.5 to every
	// cell (Haldane-Anscombe).
	Corrected bool `json:"corrected"`
}

func newOddsRatio(a, b, c, d int) *OddsRatio {
	or := stats.NewOddsRatio(a, b, c, d, stats.Z95)
	return &OddsRatio{Value: significant4(or.Value), Lo: significant4(or.Lo), Hi: significant4(or.Hi), Corrected: or.Corrected}
}

// Significant4 rounds a p- or q-value to 4 significant digits, as the
// report prints them.
func Significant4(x float64) float64 { return significant4(x) }

// Uncalled is the class every mode of g gets when the group has too few
// outcomes for the rule to call, or "" when it has enough.
func (r Rule) Uncalled(g *Group) string { return r.UncalledWith(g.Succeeded, g.Failed) }

// UncalledWith is the class every trait of a group of so many successful
// and failed traces gets when they are too few for the rule to call, or ""
// when they are enough.
func (r Rule) UncalledWith(succeeded, failed int) string {
	switch {
	case succeeded < r.MinSucceeded && failed < r.MinFailed:
		return TooFewEither
	case succeeded < r.MinSucceeded:
		return TooFewSucceeded
	case failed < r.MinFailed:
		return TooFewFailed
	}
	return ""
}

// test computes the failed-against-successful figures of every mode in g
// and registers a Fisher test for each when the group is callable.
func (r Rule) test(g *Group, tests *family) {
	for _, m := range g.Modes {
		fs, okF := m.Failed.Share()
		ss, okS := m.Succeeded.Share()
		if !okF || !okS {
			continue
		}
		m.Difference = stats.Round4(fs - ss)
		if ss > 0 {
			m.Lift = stats.Round4(fs/ss - 1)
		}
		m.NeverInSuccesses = m.Failed.K > 0 && m.Succeeded.K == 0
		a, b := m.Failed.K, m.Failed.N-m.Failed.K
		c, d := m.Succeeded.K, m.Succeeded.N-m.Succeeded.K
		m.OddsRatio = newOddsRatio(a, b, c, d)
		if r.Uncalled(g) == "" {
			m.Test = tests.add(stats.FisherExact(a, b, c, d))
		}
	}
}

// classify gives every mode of g its class, once q-values are known.
func (r Rule) classify(g *Group) {
	for _, m := range g.Modes {
		q := 1.0
		if m.Test != nil {
			q = m.Test.Q
		}
		m.Class = r.Class(m.Failed, m.Succeeded, q)
	}
}

// Class calls a trait of traces (a mode, or any other property a trace has
// or lacks) fatal, non-fatal or inconclusive, from the failed and the
// successful traces that have it (K of N each) and the q-value of Fisher's
// exact test of the two; the class of too few traces when the rule does not
// call groups of that size.
func (r Rule) Class(failed, succeeded Proportion, q float64) string {
	if uncalled := r.UncalledWith(succeeded.N, failed.N); uncalled != "" {
		return uncalled
	}
	fs, _ := failed.Share()
	ss, _ := succeeded.Share()
	// The difference and the lift as the report rounds them, so that a
	// class agrees with the figures printed beside it.
	difference := *stats.Round4(fs - ss)
	switch {
	case q < r.Alpha && difference > 0:
		return Fatal
	case (q < r.Alpha && difference < 0) || (ss > 0 && ss >= r.BenignShare && *stats.Round4(fs/ss - 1) <= r.BenignLift):
		return NonFatal
	}
	return Inconclusive
}
