package rules

import (
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/faultline/faultline/trace"
)

// repeatShape reports matching steps whose chosen fields are identical
// (whitespace-normalised), times or more of them: one finding per group of
// identical steps, citing up to maxCited of them. Steps are grouped in a map
// keyed by a hash of the fields, so the pass is linear.
type repeatShape struct {
	name  string
	m     *matcher
	same  []string
	times int
}

func newRepeatShape(name string, q *Repeat) (*repeatShape, error) {
	m, err := compileMatcher(q.Match)
	if err != nil {
		return nil, err
	}
	return &repeatShape{name: name, m: m, same: q.Same, times: q.Times}, nil
}

type group struct {
	first hit
	steps steps
}

func (s *repeatShape) eval(t *trace.Trace, work *int) []trace.Finding {
	seed := maphash.MakeSeed()
	groups := map[uint64]*group{}
	var reached []*group
	for i := range t.Steps {
		h, ok := s.m.test(t, i, work)
		if !ok {
			continue
		}
		k := s.key(seed, &t.Steps[i])
		g := groups[k]
		if g == nil {
			g = &group{first: h}
			groups[k] = g
		}
		g.steps.add(i)
		if g.steps.total == s.times {
			reached = append(reached, g)
		}
	}
	slices.SortFunc(reached, func(a, b *group) int { return a.first.step - b.first.step })
	var out []trace.Finding
	what := strings.Join(s.same, " and ")
	for _, g := range reached {
		out = append(out, trace.Finding{
			Steps: g.steps.cited,
			Quote: g.first.quote(t),
			Explanation: fmt.Sprintf("rule %s: %d steps with the same %s (%d or more make a repeat); first at step %d%s.",
				s.name, g.steps.total, what, s.times, g.first.step, citedNote(len(g.steps.cited), g.steps.total)),
		})
	}
	return out
}

// key hashes the step's compared fields, whitespace-normalised.
func (s *repeatShape) key(seed maphash.Seed, st *trace.Step) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	for _, f := range s.same {
		switch f {
		case "tool":
			h.WriteString(st.Tool)
		case "args":
			h.WriteString(trace.NormalizeSpace(st.Args))
		case "text":
			h.WriteString(trace.NormalizeSpace(st.Text))
		}
		h.WriteByte(0)
	}
	return h.Sum64()
}
