package guard

import (
	"slices"
	"time"

	"github.com/faultline/faultline/trace"
)

// Replay feeds a recorded run through a policy as the proxy would have seen
// it: each model turn (the agent's consecutive steps) and each stretch of
// what came back (tool results, messages of users and harnesses) in turn.
// A turn that tries to end the run (see finishes) is an attempt to finish.
// What the run left behind (its answer file, its outcomes) is not shown to
// the session: at run time it did not exist yet.
func Replay(t *trace.Trace, p *Policy) *Session {
	s := NewSession(t.ID, p, Start{Task: t.Task, Model: t.Model, System: t.System, Format: t.Format})
	// A decision is dated by the step it was made at, as recorded.
	s.now = func() time.Time {
		if n := len(s.run.Steps); n > 0 {
			return s.run.Steps[n-1].Time
		}
		return time.Time{}
	}
	usesTools := t.CountKind(trace.KindToolCall) > 0
	for _, turn := range Turns(t) {
		steps := t.Steps[turn.From:turn.To]
		s.Observe(steps, 0, turn.Silent || finishes(steps, turn.Agent, usesTools))
	}
	return s
}

// Turn is a stretch of a run's steps [From, To): one model turn when Agent
// is set, else what came back to the agent between two turns. Silent marks
// a stretch ending in a prompt that the model answered with nothing: the
// next step prompts it again.
type Turn struct {
	From, To int
	Agent    bool
	Silent   bool
}

// Turns splits a run into model turns and what came between them. Between
// two model turns, each prompt (a user's or the harness's message) followed
// by another ends a silent stretch: the model was asked and said nothing, as
// a proxy would have seen it.
func Turns(t *trace.Trace) []Turn {
	var out []Turn
	prompt := func(s *trace.Step) bool {
		return s.Kind == trace.KindMessage && (s.Role == trace.RoleUser || s.Role == trace.RoleHarness)
	}
	for i := range t.Steps {
		s := &t.Steps[i]
		agent := trace.ByAgent(s)
		if n := len(out); n > 0 && out[n-1].Agent == agent {
			last := &out[n-1]
			if !agent && prompt(s) && prompt(&t.Steps[i-1]) {
				last.Silent = true
			} else {
				last.To = i + 1
				continue
			}
		}
		out = append(out, Turn{From: i, To: i + 1, Agent: agent})
	}
	return out
}

// finishes reports whether a turn tries to end the run: a model turn that
// gives a final answer, or speaks and calls no tool in a run that calls
// tools; or a model turn that came back empty (the format logs it as the
// harness's), which a proxy sees as an answer of no tool call.
func finishes(turn []trace.Step, agent, usesTools bool) bool {
	if !agent {
		return slices.ContainsFunc(turn, func(s trace.Step) bool { return s.Kind == trace.KindSystem && s.Type == trace.TypeEmptyTurn })
	}
	spoke := false
	for i := range turn {
		switch turn[i].Kind {
		case trace.KindFinal:
			return true
		case trace.KindToolCall:
			return false
		case trace.KindMessage:
			spoke = true
		}
	}
	return spoke && usesTools
}

// RuleTally is how one rule fared over replayed runs of known outcome.
type RuleTally struct {
	Rule   string `json:"rule"`
	Mode   string `json:"mode"`
	Action Action `json:"action"`
	// Failed and Succeeded count the runs of each outcome it fired on
	// (acting or observing); Unknown those of no decided outcome.
	Failed    int `json:"fired_failed"`
	Succeeded int `json:"fired_succeeded"`
	Unknown   int `json:"fired_unknown"`
	// Decisions counts every firing.
	Decisions int `json:"decisions"`
	// Lead holds, for each failed run it fired on, how many steps before
	// the run's end it first fired.
	Lead []int `json:"-"`
	// StepsAfter and TokensAfter sum, over the failed runs it fired on,
	// the steps and tokens the run spent after the rule first fired: what
	// ending the run there would have saved.
	StepsAfter  int `json:"steps_after_on_failed"`
	TokensAfter int `json:"tokens_after_on_failed"`
}

// MedianLead is the median of Lead, or -1 when the rule fired on no failed
// run.
func (r *RuleTally) MedianLead() int {
	if len(r.Lead) == 0 {
		return -1
	}
	l := slices.Clone(r.Lead)
	slices.Sort(l)
	return l[len(l)/2]
}

// Tally sums replays per rule.
type Tally struct {
	Runs, Failed, Succeeded int
	// TokensEstimated is set once a run without token counts on its steps
	// was tallied: its tokens are estimated from its text (4 bytes a token).
	TokensEstimated bool
	Rules           []*RuleTally
}

// NewTally starts a tally over a policy's rules, in its order.
func NewTally(p *Policy) *Tally {
	t := &Tally{}
	for _, r := range p.Rules {
		t.Rules = append(t.Rules, &RuleTally{Rule: r.Name, Mode: r.Mode, Action: r.Action})
	}
	return t
}

// Add counts one replayed run. success is its outcome, nil when unknown.
func (t *Tally) Add(run *trace.Trace, s *Session, success *bool) {
	t.Runs++
	switch {
	case success == nil:
	case *success:
		t.Succeeded++
	default:
		t.Failed++
	}
	// Each rule's first step and how often it fired.
	first, fired := map[string]int{}, map[string]int{}
	for _, d := range s.Decisions() {
		if fired[d.Rule] == 0 {
			first[d.Rule] = d.Step
		}
		fired[d.Rule]++
	}
	estimated := false
	tokensAfter := func(step int) int {
		n := 0
		for i := step + 1; i < len(run.Steps); i++ {
			st := &run.Steps[i]
			if st.Tokens > 0 {
				n += st.Tokens
			} else {
				n += (len(st.Text) + len(st.Args) + 3) / 4
				estimated = true
			}
		}
		return n
	}
	for _, rt := range t.Rules {
		step, ok := first[rt.Rule]
		if !ok {
			continue
		}
		rt.Decisions += fired[rt.Rule]
		switch {
		case success == nil:
			rt.Unknown++
		case *success:
			rt.Succeeded++
		default:
			after := len(run.Steps) - 1 - step
			rt.Failed++
			rt.Lead = append(rt.Lead, after)
			rt.StepsAfter += after
			rt.TokensAfter += tokensAfter(step)
		}
	}
	t.TokensEstimated = t.TokensEstimated || estimated
}
