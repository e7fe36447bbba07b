// Package compare sets two runs of the same task side by side (two models,
// or two versions of an agent): their steps aligned by tool call, and what
// each run came to (its outcome, the failure modes found in it, its size).
//
// Tool calls are the backbone of a run, so the alignment is of calls: two
// calls can be paired when they use the same tool (every shell counts as
// one) and, for a shell, the same program; they pair exactly when their
// normalised arguments are the same. Paths are compared by their last
// element and ids and timestamps are masked, since two runs of one task are
// made in different directories at different times. The pairing is a
// weighted longest common subsequence: the calls keep their order on both
// sides, and calls left unpaired stand against a gap. Messages and
// reasoning go with the call they lead to; what comes before the agent's
// first step (instructions, the task) and after its last call (its answer)
// are rows of their own.
package compare

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/faultline/faultline/trace"
	"github.com/faultline/faultline/trace/toolcall"
)

// Comparison is two runs side by side.
type Comparison struct {
	A      Side   `json:"a"`
	B      Side   `json:"b"`
	Counts Counts `json:"counts"`
	Rows   []Row  `json:"rows"`
	Modes  []Mode `json:"modes"`
}

// Side is what one run came to.
type Side struct {
	ID       string `json:"id"`
	Format   string `json:"format"`
	System   string `json:"system"`
	Model    string `json:"model"`
	Scenario string `json:"scenario"`
	Trial    string `json:"trial"`
	// Outcome is the primary outcome (trace.PrimaryOutcome), nil when none
	// is decided.
	Outcome *trace.Outcome `json:"outcome"`
	// Modes are the modes marked present, by annotation source.
	Modes     []SourceModes `json:"modes"`
	Steps     int           `json:"steps"`
	ToolCalls int           `json:"tool_calls"`
	// Tokens is the run's total as its format reported it, else its input
	// and output, else the sum of its steps' tokens; 0 when unknown.
	Tokens int `json:"tokens"`
	// Duration is from the run's start to its end (or its first step's
	// time to its last's); 0 when its format records no time.
	Duration time.Duration `json:"-"`
}

// MarshalJSON writes the duration in seconds (duration_seconds), null when
// unknown.
func (s Side) MarshalJSON() ([]byte, error) {
	type fields Side
	var seconds *float64
	if s.Duration > 0 {
		v := s.Duration.Seconds()
		seconds = &v
	}
	return json.Marshal(struct {
		fields
		Seconds *float64 `json:"duration_seconds"`
	}{fields(s), seconds})
}

// SourceModes are the modes one annotation source marks present on a run.
type SourceModes struct {
	Source string   `json:"source"`
	Modes  []string `json:"modes"`
}

// Mode says which runs a mode was found on, by any source.
type Mode struct {
	Mode string `json:"mode"`
	A    bool   `json:"a"`
	B    bool   `json:"b"`
}

// Counts sums up an alignment.
type Counts struct {
	Exact   int `json:"exact"`
	Similar int `json:"similar"`
	OnlyA   int `json:"only_a"`
	OnlyB   int `json:"only_b"`
}

// Kind says what a row holds.
type Kind string

const (
	KindOpening Kind = "opening" // the steps before the agent's first
	KindCall    Kind = "call"    // a tool call, its result and what led to it
	KindClosing Kind = "closing" // the steps after the last call
)

// Match says how the two sides of a row compare.
type Match string

const (
	MatchExact     Match = "exact"     // the same call (or the same text)
	MatchSimilar   Match = "similar"   // the same tool and program, other arguments
	MatchDifferent Match = "different" // opening or closing steps whose texts differ
	MatchOnlyA     Match = "only_a"    // a gap on B's side
	MatchOnlyB     Match = "only_b"    // a gap on A's side
)

// Row is one line of the side-by-side view.
type Row struct {
	Kind  Kind  `json:"kind"`
	Match Match `json:"match"`
	// A and B are the row's steps on each side; nil on the side of a gap.
	A *Cell `json:"a"`
	B *Cell `json:"b"`
}

// Cell is one side of a row.
type Cell struct {
	// Call is the tool call's step, nil on an opening or closing row.
	Call *int `json:"call"`
	// Steps are every step of the row on this side, in order: the
	// messages and reasoning that led to the call, the call, its result.
	Steps []int `json:"steps"`
	// Label is the row in one line: the call's command or arguments (paths
	// shortened to their last element), else the last text of its steps;
	// at most labelLength characters.
	Label string `json:"label"`
	// Failed says the call's result reports a failure.
	Failed bool `json:"failed"`
}

// labelLength bounds a cell's label: a heredoc can hold a whole script,
// and the step itself holds it all.
const labelLength = 500

// Compare sets two runs side by side. The traces must hold their steps.
func Compare(a, b *trace.Trace) *Comparison {
	ua, ub := unitsOf(a), unitsOf(b)
	c := &Comparison{A: sideOf(a), B: sideOf(b), Rows: []Row{}}
	if ua.opening != nil || ub.opening != nil {
		c.Rows = append(c.Rows, edgeRow(KindOpening, a, ua.opening, b, ub.opening))
	}
	sa, sb := signatures(a, ua.calls), signatures(b, ub.calls)
	for _, p := range align(sa, sb) {
		row := Row{Kind: KindCall}
		if p.a >= 0 {
			row.A = callCell(a, ua.calls[p.a], sa[p.a])
		}
		if p.b >= 0 {
			row.B = callCell(b, ub.calls[p.b], sb[p.b])
		}
		switch {
		case p.b < 0:
			row.Match = MatchOnlyA
			c.Counts.OnlyA++
		case p.a < 0:
			row.Match = MatchOnlyB
			c.Counts.OnlyB++
		case sa[p.a].full == sb[p.b].full:
			row.Match = MatchExact
			c.Counts.Exact++
		default:
			row.Match = MatchSimilar
			c.Counts.Similar++
		}
		c.Rows = append(c.Rows, row)
	}
	if ua.closing != nil || ub.closing != nil {
		c.Rows = append(c.Rows, edgeRow(KindClosing, a, ua.closing, b, ub.closing))
	}
	c.Modes = modesOf(c.A, c.B)
	return c
}

// units are a run's steps grouped for alignment.
type units struct {
	opening []int
	calls   []callUnit
	closing []int
}

// callUnit is a tool call and its steps: what led to it, the call, its
// result.
type callUnit struct {
	call  int
	steps []int
}

// unitsOf groups a run's steps: the steps before the agent's first go to
// the opening; each tool call takes its result and the steps since the
// previous call; the steps after the last call go to the closing.
func unitsOf(t *trace.Trace) units {
	var u units
	i := 0
	for ; i < len(t.Steps) && !trace.ByAgent(&t.Steps[i]) && t.Steps[i].Kind != trace.KindToolCall; i++ {
		u.opening = append(u.opening, i)
	}
	var pending []int
	for ; i < len(t.Steps); i++ {
		s := &t.Steps[i]
		switch {
		case s.Kind == trace.KindToolCall:
			steps := append(pending, i)
			if r := t.Result(i); r != nil {
				steps = append(steps, r.Index)
			}
			sort.Ints(steps)
			u.calls = append(u.calls, callUnit{call: i, steps: steps})
			pending = nil
		case s.Kind == trace.KindToolResult && s.Pair != nil && t.Step(*s.Pair) != nil && t.Steps[*s.Pair].Kind == trace.KindToolCall:
			// Its call's unit holds it.
		default:
			pending = append(pending, i)
		}
	}
	u.closing = pending
	return u
}

// signatures reads the call of each unit.
func signatures(t *trace.Trace, calls []callUnit) []signature {
	out := make([]signature, len(calls))
	for k, u := range calls {
		out[k] = signatureOf(&t.Steps[u.call])
	}
	return out
}

func callCell(t *trace.Trace, u callUnit, sig signature) *Cell {
	call := u.call
	return &Cell{Call: &call, Steps: u.steps, Label: trace.Clip(sig.label, labelLength), Failed: toolcall.Failed(t, call)}
}

// edgeRow sets the opening (or closing) steps of the two runs against each
// other: exact when their texts are the same once spaces are normalised.
func edgeRow(kind Kind, a *trace.Trace, sa []int, b *trace.Trace, sb []int) Row {
	row := Row{Kind: kind, A: textCell(a, sa), B: textCell(b, sb)}
	switch {
	case row.B == nil:
		row.Match = MatchOnlyA
	case row.A == nil:
		row.Match = MatchOnlyB
	case textOf(a, sa) == textOf(b, sb):
		row.Match = MatchExact
	default:
		row.Match = MatchDifferent
	}
	return row
}

func textCell(t *trace.Trace, steps []int) *Cell {
	if len(steps) == 0 {
		return nil
	}
	c := &Cell{Steps: steps}
	for _, i := range slices.Backward(steps) {
		if text := trace.NormalizeSpace(t.Steps[i].Text); text != "" {
			c.Label = trace.Clip(shortenPaths(text), labelLength)
			break
		}
	}
	return c
}

func textOf(t *trace.Trace, steps []int) string {
	var all []string
	for _, i := range steps {
		all = append(all, string(t.Steps[i].Kind), t.Steps[i].Text)
	}
	return trace.NormalizeSpace(maskVolatile(shortenPaths(strings.Join(all, "\n"))))
}

func sideOf(t *trace.Trace) Side {
	s := Side{ID: t.ID, Format: t.Format, System: t.System, Model: t.Model, Scenario: t.Scenario, Trial: t.Trial,
		Outcome: trace.PrimaryOutcome(t.Outcomes), Modes: []SourceModes{}, Steps: len(t.Steps), ToolCalls: t.CountKind(trace.KindToolCall)}
	bySource := map[string][]string{}
	for _, f := range t.Findings {
		if f.Verdict == trace.Present && f.Mode != "" && !slices.Contains(bySource[f.Source], f.Mode) {
			bySource[f.Source] = append(bySource[f.Source], f.Mode)
		}
	}
	for source, modes := range bySource {
		slices.Sort(modes)
		s.Modes = append(s.Modes, SourceModes{Source: source, Modes: modes})
	}
	slices.SortFunc(s.Modes, func(x, y SourceModes) int { return strings.Compare(x.Source, y.Source) })
	u := t.Usage
	switch {
	case u.TotalTokens > 0:
		s.Tokens = u.TotalTokens
	case u.InputTokens+u.OutputTokens > 0:
		s.Tokens = u.InputTokens + u.OutputTokens
	default:
		for i := range t.Steps {
			s.Tokens += t.Steps[i].Tokens
		}
	}
	start, end := t.Started, t.Ended
	if start.IsZero() || end.IsZero() {
		start, end = stepTimes(t)
	}
	if !start.IsZero() && end.After(start) {
		s.Duration = end.Sub(start)
	}
	return s
}

// stepTimes are the first and last times the steps record.
func stepTimes(t *trace.Trace) (first, last time.Time) {
	for i := range t.Steps {
		at := t.Steps[i].Time
		if at.IsZero() {
			continue
		}
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
	return first, last
}

// modesOf lists every mode found on either run, by any source, in code
// order.
func modesOf(a, b Side) []Mode {
	found := map[string]*Mode{}
	var out []Mode
	mark := func(s Side, set func(*Mode)) {
		for _, sm := range s.Modes {
			for _, m := range sm.Modes {
				if found[m] == nil {
					found[m] = &Mode{Mode: m}
				}
				set(found[m])
			}
		}
	}
	mark(a, func(m *Mode) { m.A = true })
	mark(b, func(m *Mode) { m.B = true })
	for _, m := range found {
		out = append(out, *m)
	}
	slices.SortFunc(out, func(x, y Mode) int { return strings.Compare(x.Mode, y.Mode) })
	if out == nil {
		out = []Mode{}
	}
	return out
}
