package guard

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/trace"
)

// Session is the guard's view of one run: its steps so far, what each rule
// has fired on, and where the run stands against its budget. A Session is
// not safe for concurrent use; the proxy holds one lock per session.
type Session struct {
	ID     string
	policy *Policy
	sets   [2]detectorSet // see detectorSets
	run    trace.Trace
	// open holds the calls awaiting their result, by call id.
	open map[string][]int
	// fired holds what each rule has fired on (see Session.fire), fires
	// how often each rule acted.
	fired map[string]bool
	fires map[*Rule]int
	// tokens is what the model was sent and wrote so far.
	tokens int
	// ended is the decision that stopped the run (a block).
	ended *Decision
	// pending holds the messages of inject decisions not yet delivered.
	pending   []Decision
	decisions []Decision
	now       func() time.Time
}

// detectorSet is what runs at a turn: each detector once, with the rules
// its findings go to.
type detectorSet struct {
	detectors []*detect.Detector
	rules     map[string][]*Rule // by detector name
}

// detectorSets returns the policy's detectors of each turn: [0] those of
// every turn, [1] those of a turn that tries to finish (the gates' too).
func detectorSets(p *Policy) [2]detectorSet {
	var sets [2]detectorSet
	for i := range sets {
		sets[i].rules = map[string][]*Rule{}
		for _, r := range p.Rules {
			if r.Detectors == nil || (r.AtFinish && i == 0) {
				continue
			}
			for _, d := range r.Detectors {
				if sets[i].rules[d.Name] == nil {
					sets[i].detectors = append(sets[i].detectors, d)
				}
				sets[i].rules[d.Name] = append(sets[i].rules[d.Name], r)
			}
		}
	}
	return sets
}

// Start describes a run as it begins: what a detector may know before the
// first step (the task, and what the harness says about the agent).
type Start struct {
	Task, Model, System, Format string
}

// NewSession starts guarding a run under a policy.
func NewSession(id string, p *Policy, s Start) *Session {
	return &Session{
		ID:     id,
		policy: p,
		sets:   detectorSets(p),
		run:    trace.Trace{ID: id, Task: s.Task, Model: s.Model, System: s.System, Format: s.Format},
		open:   map[string][]int{},
		fired:  map[string]bool{},
		fires:  map[*Rule]int{},
		now:    time.Now,
	}
}

// Steps returns the run so far. The caller must not change it.
func (s *Session) Steps() []trace.Step { return s.run.Steps }

// Decisions returns every decision of the session, in order.
func (s *Session) Decisions() []Decision { return s.decisions }

// Ended returns the decision that ended the session (a block), or nil.
func (s *Session) Ended() *Decision { return s.ended }

// TakeInjections returns the inject decisions not yet delivered to the
// agent, and forgets them: their messages go into the next request.
func (s *Session) TakeInjections() []Decision {
	out := s.pending
	s.pending = nil
	return out
}

// Requeue puts back injections taken by TakeInjections that never reached
// the agent (the request carrying them failed), ahead of any taken since.
func (s *Session) Requeue(ds []Decision) {
	s.pending = append(slices.Clone(ds), s.pending...)
}

// Observe appends the steps of one model turn or of what came back to it
// (tool results, a user's message) and returns the decisions they cause.
// tokens is what the turn cost, when known (0 otherwise: the steps' own
// counts are used). finishing says the agent tries to end the run with this
// turn: it spoke and called no tool.
func (s *Session) Observe(steps []trace.Step, tokens int, finishing bool) []Decision {
	for _, st := range steps {
		s.append(st)
		if tokens == 0 {
			s.tokens += st.Tokens
		}
	}
	s.tokens += tokens
	if len(steps) == 0 && !finishing {
		return nil
	}
	var out []Decision
	for _, r := range s.policy.Rules {
		switch {
		case r.Signals != nil:
			out = append(out, s.clarify(r)...)
		case r.Budget != nil:
			out = append(out, s.budget(r)...)
		}
	}
	out = append(out, s.detectors(finishing)...)
	for _, d := range out {
		switch {
		case d.Action == Block && s.ended == nil:
			s.ended = &d
		case d.Action == Inject:
			s.pending = append(s.pending, d)
		}
	}
	s.decisions = append(s.decisions, out...)
	return out
}

// append adds a step at the end of the run, pairing calls and results:
// by the pair a recorded step carries when its partner is already in the
// run, else by call id.
func (s *Session) append(st trace.Step) {
	i := len(s.run.Steps)
	st.Index = i
	partner := -1
	if st.Pair != nil && *st.Pair < i {
		partner = *st.Pair
	}
	st.Pair = nil
	switch {
	case st.Kind == trace.KindToolCall && st.CallID != "":
		s.open[st.CallID] = append(s.open[st.CallID], i)
	case st.Kind == trace.KindToolResult && partner < 0 && st.CallID != "":
		if calls := s.open[st.CallID]; len(calls) > 0 {
			partner = calls[len(calls)-1]
			s.open[st.CallID] = calls[:len(calls)-1]
		}
	}
	s.run.Steps = append(s.run.Steps, st)
	if partner >= 0 && s.run.Steps[partner].Pair == nil {
		c, r := partner, i
		s.run.Steps[partner].Pair = &r
		s.run.Steps[i].Pair = &c
		if s.run.Steps[i].Tool == "" {
			s.run.Steps[i].Tool = s.run.Steps[partner].Tool
		}
	}
}

// decide makes a decision of rule r at the run's last step, acting unless
// the rule has acted its most times already.
func (s *Session) decide(r *Rule, d Decision) Decision {
	d.Session, d.Rule, d.Mode = s.ID, r.Name, r.Mode
	d.Step = len(s.run.Steps) - 1
	d.Time = s.now()
	d.Action = r.Action
	if r.MaxFires > 0 && s.fires[r] >= r.MaxFires {
		d.Action = Observe
	}
	if d.Action > Observe {
		s.fires[r]++
	}
	if d.Message == "" {
		d.Message = r.Message
	}
	if d.Message == "" {
		d.Message = d.Explanation
	}
	return d
}

// fire reports whether a rule has yet to fire on key, and notes that it
// has.
func (s *Session) fire(r *Rule, key string) bool {
	k := r.Name + "\x00" + key
	if s.fired[k] {
		return false
	}
	s.fired[k] = true
	return true
}

// clarify is the clarification branch (FM-2.2): before the agent's first
// move, a task matching one of the rule's signals is ambiguous enough to
// ask about rather than act on.
func (s *Session) clarify(r *Rule) []Decision {
	for i := range s.run.Steps {
		if trace.ByAgent(&s.run.Steps[i]) {
			return nil // the agent has moved: the branch is behind it
		}
	}
	texts := []string{s.run.Task}
	cites := []int{}
	for i := range s.run.Steps {
		if st := &s.run.Steps[i]; st.Kind == trace.KindMessage && st.Role == trace.RoleUser {
			texts = append(texts, st.Text)
			cites = append(cites, i)
		}
	}
	for _, re := range r.Signals {
		for j, text := range texts {
			loc := re.FindStringIndex(text)
			if loc == nil || !s.fire(r, "task") {
				continue
			}
			d := Decision{
				Quote:       strings.TrimSpace(text[loc[0]:loc[1]]),
				Explanation: fmt.Sprintf("The task is ambiguous (it matches %q): the agent should ask for clarification before it acts.", re.String()),
			}
			if j > 0 {
				d.Steps = []int{cites[j-1]}
			}
			return []Decision{s.decide(r, d)}
		}
	}
	return nil
}

// budget is the explicit end of a run (FM-1.5): a warning to conclude at
// the budget's WarnAt of either limit, the rule's action at the limit.
func (s *Session) budget(r *Rule) []Decision {
	b := r.Budget
	used := func(n, limit int) float64 {
		if limit == 0 {
			return 0
		}
		return float64(n) / float64(limit)
	}
	share := max(used(len(s.run.Steps), b.Steps), used(s.tokens, b.Tokens))
	spent := fmt.Sprintf("%d steps", len(s.run.Steps))
	if b.Steps > 0 {
		spent += fmt.Sprintf(" of %d", b.Steps)
	}
	if b.Tokens > 0 {
		spent += fmt.Sprintf(", %d tokens of %d", s.tokens, b.Tokens)
	}
	switch {
	case share >= 1 && s.fire(r, "limit"):
		return []Decision{s.decide(r, Decision{
			Explanation: "The run has spent its budget (" + spent + ") without finishing: it should stop here.",
		})}
	case share >= b.WarnAt && b.WarnAt < 1 && share < 1 && s.fire(r, "warn"):
		d := s.decide(r, Decision{
			Explanation: "The run has spent most of its budget (" + spent + "): it should conclude and give its answer now.",
		})
		// A warning is delivered, never enforced: it may be injected but
		// blocks nothing.
		d.Action = min(d.Action, Inject)
		return []Decision{d}
	}
	return nil
}

// detectors runs the detectors of the rules that apply now over the run
// so far (the gates' only when the agent tries to finish) and turns their
// new findings into decisions.
func (s *Session) detectors(finishing bool) []Decision {
	set := &s.sets[0]
	if finishing {
		set = &s.sets[1]
	}
	if len(set.detectors) == 0 {
		return nil
	}
	findings, errs := detect.Run(&s.run, set.detectors)
	for _, err := range errs {
		// A finding whose evidence does not check out is a detector's bug:
		// dropped, as offline, and said.
		slog.Warn("guard: detector finding rejected", "session", s.ID, "err", err)
	}
	var out []Decision
	for _, f := range findings {
		for _, r := range set.rules[f.Detector] {
			if f.Confidence < r.MinConfidence || len(f.Steps) < r.MinSteps {
				continue
			}
			key := fmt.Sprintf("%s@%d", f.Detector, f.FirstStep())
			if r.AtFinish {
				// A gate judges each attempt to finish on its own.
				key += fmt.Sprintf("/%d", len(s.run.Steps))
			}
			if !s.fire(r, key) {
				continue
			}
			out = append(out, s.decide(r, Decision{
				Detector:    f.Detector,
				Steps:       f.Steps,
				Quote:       f.Quote,
				Explanation: f.Explanation,
				Finishing:   finishing,
			}))
		}
	}
	return out
}
