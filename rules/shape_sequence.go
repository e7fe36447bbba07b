package rules

import (
	"fmt"
	"slices"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// sequenceShape reports a step matching first followed by a step matching
// then: the first such step after it, at most within steps later. One
// finding per trace cites the pairs (up to maxCited steps).
type sequenceShape struct {
	name        string
	first, then *matcher
	within      int
}

func newSequenceShape(name string, q *Sequence) (*sequenceShape, error) {
	first, err := compileMatcher(q.First)
	if err != nil {
		return nil, err
	}
	then, err := compileMatcher(q.Then)
	if err != nil {
		return nil, err
	}
	return &sequenceShape{name: name, first: first, then: then, within: q.Within}, nil
}

func (s *sequenceShape) eval(t *trace.Trace, work *int) []trace.Finding {
	// pending holds the first-steps not yet followed, oldest first, from
	// head on: each is looked at once more, when it pairs or expires.
	var pending []hit
	head := 0
	var pairs steps
	var firstPair [2]hit
	for i := range t.Steps {
		for head < len(pending) && i-pending[head].step > s.within {
			*work++
			head++
		}
		if head == len(pending) {
			pending, head = pending[:0], 0
		}
		if then, ok := s.then.test(t, i, work); ok && head < len(pending) {
			// The first then-step after each pending first-step closes it.
			for _, a := range pending[head:] {
				*work++
				if pairs.total == 0 {
					firstPair = [2]hit{a, then}
				}
				pairs.add(a.step, i)
			}
			pending, head = pending[:0], 0
		}
		if h, ok := s.first.test(t, i, work); ok {
			pending = append(pending, h)
		}
	}
	if pairs.total == 0 {
		return nil
	}
	note := ""
	if len(pairs.cited) < 2*pairs.total {
		note = fmt.Sprintf(" (the steps of the first %d cited)", len(pairs.cited)/2)
	}
	cited := dedupe(pairs.cited)
	a, b := firstPair[0], firstPair[1]
	return []trace.Finding{{
		Steps: cited,
		Quote: a.quote(t),
		Explanation: fmt.Sprintf("rule %s: step %d (first) was followed by step %d (then), %s later (within %d); %s in all%s.",
			s.name, a.step, b.step, text.Plural(b.step-a.step, "step", "steps"), s.within,
			text.Plural(pairs.total, "such pair", "such pairs"), note),
	}}
}

// dedupe sorts the cited steps and drops repeats: several first-steps may
// share a then-step.
func dedupe(steps []int) []int {
	slices.Sort(steps)
	seen := make(map[int]bool, len(steps))
	out := steps[:0]
	for _, s := range steps {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
