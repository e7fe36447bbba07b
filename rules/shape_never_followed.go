package rules

import (
	"fmt"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// neverFollowedShape reports steps matching first that no step matching by
// follows within within steps (0: before the run ends). With a window, a
// first-step in the run's last within steps is not reported: the run may
// yet follow it up. One finding per trace cites the unfollowed steps (up
// to maxCited).
type neverFollowedShape struct {
	name      string
	first, by *matcher
	within    int
}

func newNeverFollowedShape(name string, q *NeverFollowed) (*neverFollowedShape, error) {
	first, err := compileMatcher(q.First)
	if err != nil {
		return nil, err
	}
	by, err := compileMatcher(q.By)
	if err != nil {
		return nil, err
	}
	return &neverFollowedShape{name: name, first: first, by: by, within: q.Within}, nil
}

func (s *neverFollowedShape) eval(t *trace.Trace, work *int) []trace.Finding {
	// pending holds the first-steps still waiting for a follow-up, oldest
	// first, from head on; each leaves once, followed or expired.
	var pending []hit
	head := 0
	var missed steps
	var firstMissed hit
	expire := func(now int) {
		for s.within > 0 && head < len(pending) && now-pending[head].step > s.within {
			*work++
			if missed.total == 0 {
				firstMissed = pending[head]
			}
			missed.add(pending[head].step)
			head++
		}
		if head == len(pending) {
			pending, head = pending[:0], 0
		}
	}
	for i := range t.Steps {
		expire(i)
		if _, ok := s.by.test(t, i, work); ok {
			*work += len(pending) - head
			pending, head = pending[:0], 0
		}
		if h, ok := s.first.test(t, i, work); ok {
			pending = append(pending, h)
		}
	}
	expire(len(t.Steps))
	if s.within == 0 {
		for _, h := range pending[head:] {
			*work++
			if missed.total == 0 {
				firstMissed = h
			}
			missed.add(h.step)
		}
	}
	if missed.total == 0 {
		return nil
	}
	window := "before the run ended"
	if s.within > 0 {
		window = fmt.Sprintf("within %d steps", s.within)
	}
	return []trace.Finding{{
		Steps: missed.cited,
		Quote: firstMissed.quote(t),
		Explanation: fmt.Sprintf("rule %s: step %d matched first and no step matching by followed it %s; %s in all%s.",
			s.name, firstMissed.step, window, text.Plural(missed.total, "such step", "such steps"), citedNote(len(missed.cited), missed.total)),
	}}
}
