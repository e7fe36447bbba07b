package rules

import (
	"fmt"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// countShape reports a run with at least atLeast matching steps: one
// finding, citing the first maxCited of them.
type countShape struct {
	name    string
	m       *matcher
	atLeast int
}

func newCountShape(name string, c *Count) (*countShape, error) {
	m, err := compileMatcher(c.Match)
	if err != nil {
		return nil, err
	}
	return &countShape{name: name, m: m, atLeast: c.AtLeast}, nil
}

func (s *countShape) eval(t *trace.Trace, work *int) []trace.Finding {
	first, matched := scan(t, s.m, work)
	if matched.total == 0 || matched.total < s.atLeast {
		return nil
	}
	return []trace.Finding{{
		Steps: matched.cited,
		Quote: first.quote(t),
		Explanation: fmt.Sprintf("rule %s: %s matched (at least %d make a finding); first at step %d%s.",
			s.name, text.Plural(matched.total, "step", "steps"), s.atLeast, first.step, citedNote(len(matched.cited), matched.total)),
	}}
}
