package trace

import "fmt"

// Problem is something wrong with a trace's structure. Problems are reported,
// never fatal: a trace with an orphaned tool result is still worth reading.
type Problem struct {
	Step    int    `json:"step"` // -1 when the problem is about the whole trace
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Step < 0 {
		return p.Message
	}
	return fmt.Sprintf("step %d: %s", p.Step, p.Message)
}

// Link pairs each tool call with its result by call id, once, at ingest.
// A call id that is reused pairs each result with the latest open call of
// that id. It returns a problem for every result without a call and every
// call without a result.
func (t *Trace) Link() []Problem {
	var problems []Problem
	open := map[string][]int{} // call id → indices of calls awaiting a result
	for i := range t.Steps {
		s := &t.Steps[i]
		s.Pair = nil
	}
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.CallID == "" {
			continue
		}
		switch s.Kind {
		case KindToolCall:
			open[s.CallID] = append(open[s.CallID], i)
		case KindToolResult:
			calls := open[s.CallID]
			if len(calls) == 0 {
				problems = append(problems, Problem{i, fmt.Sprintf("tool result for call id %q that has no call before it", s.CallID)})
				continue
			}
			c := calls[len(calls)-1]
			open[s.CallID] = calls[:len(calls)-1]
			ci, ri := c, i
			t.Steps[c].Pair = &ri
			s.Pair = &ci
			if s.Tool == "" {
				s.Tool = t.Steps[c].Tool
			}
		}
	}
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Kind == KindToolCall && s.CallID != "" && s.Pair == nil {
			problems = append(problems, Problem{i, fmt.Sprintf("tool call %q (id %q) has no result", s.Tool, s.CallID)})
		}
	}
	return problems
}

// Validate checks the invariants every consumer relies on: dense step
// indices, known kinds, and pairs that point at each other.
func (t *Trace) Validate() []Problem {
	var problems []Problem
	if t.ID == "" {
		problems = append(problems, Problem{-1, "trace has no id"})
	}
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Index != i {
			problems = append(problems, Problem{i, fmt.Sprintf("index is %d, want %d", s.Index, i)})
		}
		if !s.Kind.Valid() {
			problems = append(problems, Problem{i, fmt.Sprintf("unknown kind %q", s.Kind)})
		}
		if s.Pair != nil {
			other := t.Step(*s.Pair)
			if other == nil || other.Pair == nil || *other.Pair != i {
				problems = append(problems, Problem{i, fmt.Sprintf("pair %d does not point back", *s.Pair)})
			}
		}
	}
	return problems
}
