package rules

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/trace"
)

// budgetShape reports a run longer than its budget: more than steps steps,
// or more than tokens tokens. Tokens are those the format attributes to
// steps, summed as the run goes; a trace that attributes none is measured
// by its total usage, and the finding then cites its last step. One
// finding cites the step where each exceeded limit was passed.
type budgetShape struct {
	name   string
	budget Budget
}

func (s *budgetShape) eval(t *trace.Trace, work *int) []trace.Finding {
	var reasons []string
	var at []int
	if b := s.budget.Steps; b > 0 && len(t.Steps) > b {
		at = append(at, b)
		reasons = append(reasons, fmt.Sprintf("%d steps, over its budget of %d (passed at step %d)", len(t.Steps), b, b))
	}
	if b := s.budget.Tokens; b > 0 && len(t.Steps) > 0 {
		sum, passed := 0, -1
		for i := range t.Steps {
			*work++
			sum += t.Steps[i].Tokens
			if passed < 0 && sum > b {
				passed = i
			}
		}
		switch {
		case passed >= 0:
			at = append(at, passed)
			reasons = append(reasons, fmt.Sprintf("%d tokens, over its budget of %d (passed at step %d)", sum, b, passed))
		case sum == 0 && t.Usage.TotalTokens > b:
			at = append(at, len(t.Steps)-1)
			reasons = append(reasons, fmt.Sprintf("%d tokens in all, over its budget of %d", t.Usage.TotalTokens, b))
		}
	}
	if len(at) == 0 {
		return nil
	}
	if len(at) == 2 && at[1] < at[0] {
		at[0], at[1] = at[1], at[0]
	}
	if len(at) == 2 && at[0] == at[1] {
		at = at[:1]
	}
	return []trace.Finding{{
		Steps:       at,
		Quote:       hit{step: at[0]}.quote(t),
		Explanation: fmt.Sprintf("rule %s: the run took %s.", s.name, strings.Join(reasons, ", and ")),
	}}
}
