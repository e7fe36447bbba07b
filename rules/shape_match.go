package rules

import (
	"fmt"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// matchShape reports the steps a matcher holds on: one finding per trace,
// citing the first maxCited of them.
type matchShape struct {
	name string
	m    *matcher
}

func newMatchShape(name string, m *Matcher) (*matchShape, error) {
	c, err := compileMatcher(m)
	if err != nil {
		return nil, err
	}
	return &matchShape{name: name, m: c}, nil
}

func (s *matchShape) eval(t *trace.Trace, work *int) []trace.Finding {
	first, matched := scan(t, s.m, work)
	if matched.total == 0 {
		return nil
	}
	return []trace.Finding{{
		Steps: matched.cited,
		Quote: first.quote(t),
		Explanation: fmt.Sprintf("rule %s: %s matched; first at step %d%s.",
			s.name, text.Plural(matched.total, "step", "steps"), first.step, citedNote(len(matched.cited), matched.total)),
	}}
}

// scan runs m over every step: the first hit, and the steps it held on.
func scan(t *trace.Trace, m *matcher, work *int) (hit, steps) {
	var first hit
	var matched steps
	for i := range t.Steps {
		h, ok := m.test(t, i, work)
		if !ok {
			continue
		}
		if matched.total == 0 {
			first = h
		}
		matched.add(i)
	}
	return first, matched
}
