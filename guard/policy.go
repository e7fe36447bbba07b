package guard

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/faultline/faultline/internal/yamlerr"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/taxonomy"
)

// Policy is the set of rules a guard applies, with its limits.
type Policy struct {
	Name string
	// File is where the policy was read from, "" for the built-in one.
	File  string
	Rules []*Rule
	// FailOpen passes traffic through untouched when the guard itself
	// fails (a request it cannot read, a detector that panics); otherwise
	// such a request is refused.
	FailOpen bool
	// MaxSessions bounds the sessions kept at once: the least recently
	// used is evicted (and counted) to make room for a new one.
	MaxSessions int
	// SessionIdle is how long a session may go unused before it is
	// evicted.
	SessionIdle time.Duration
}

// Rule turns what a detector, the budget or the clarification signals
// report into a decision.
type Rule struct {
	Name string
	Mode string
	// Exactly one of Detectors, Budget and Signals is set.
	Detectors []*detect.Detector
	Budget    *Budget
	// Signals are the phrases of a task that make it ambiguous enough to
	// ask before acting (FM-2.2): the clarification branch fires when the
	// task matches one.
	Signals []*regexp.Regexp
	// AtFinish applies the rule only when the agent tries to finish.
	AtFinish bool
	Action   Action
	// Message is what inject adds and block answers; empty, the finding's
	// explanation is used.
	Message string
	// MinConfidence and MinSteps filter findings: a finding fires the rule
	// once its confidence and the number of steps it cites reach them.
	MinConfidence float64
	MinSteps      int
	// MaxFires bounds how often the rule acts in one session; after that
	// its decisions are observe only, so that a gate cannot hold a run
	// forever. 0 is no bound.
	MaxFires int
	// Line is the rule's line in its policy file.
	Line int
}

// Budget is an explicit end for a run (FM-1.5): at WarnAt of either limit
// the agent is told to conclude, at the limit the rule's action applies.
type Budget struct {
	Steps  int     // steps of the run, 0 for no limit
	Tokens int     // tokens the model was sent and wrote, 0 for no limit
	WarnAt float64 // fraction of a limit at which the agent is warned
}

// Default is the policy used when none is named: every intervention of the
// study, observing only, so that a first run records where each would have
// acted without changing anything.
func Default() *Policy {
	find := func(names ...string) []*detect.Detector {
		var out []*detect.Detector
		for _, n := range names {
			d, ok := detect.Lookup(n)
			if !ok {
				panic("guard: no detector " + n)
			}
			out = append(out, d)
		}
		return out
	}
	return &Policy{
		Name:        "default (observe only)",
		FailOpen:    true,
		MaxSessions: 10000,
		SessionIdle: time.Hour,
		Rules: []*Rule{
			{Name: "loop-control", Mode: "FM-1.3", Detectors: find("repeated-tool-call"), MinSteps: 3, MaxFires: 3},
			{Name: "known-error", Mode: "FM-1.4", Detectors: find("repeated-known-error"), MaxFires: 3},
			{Name: "stalled", Mode: "FM-1.5", Detectors: find("stalled-loop", "harness-retry-loop"), MaxFires: 2},
			{Name: "budget", Mode: "FM-1.5", Budget: &Budget{Steps: 300, Tokens: 0, WarnAt: 0.8}},
			{Name: "answer-gate", Mode: "FM-3.1", Detectors: find("missing-answer"), AtFinish: true, MaxFires: 2},
			{Name: "verification-gate", Mode: "FM-3.2", Detectors: find("skipped-validation"), AtFinish: true, MaxFires: 2},
			{Name: "claim-gate", Mode: "FM-3.3", Detectors: find("ignored-validation-failure", "unbacked-claim"), AtFinish: true, MaxFires: 2},
		},
	}
}

// Load reads a policy file. A mistake is reported as file:line: what is
// wrong. Its rules may name the built-in detectors and those given in extra
// (the user's own, compiled from a rule file).
func Load(path string, extra ...*detect.Detector) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("guard policy: %w", err)
	}
	return Parse(path, data, extra...)
}

// Parse reads a policy from data, naming path in its errors; extra are
// detectors its rules may name besides the built-in ones.
func Parse(path string, data []byte, extra ...*detect.Detector) (*Policy, error) {
	p := &Policy{File: path, FailOpen: true, MaxSessions: 10000, SessionIdle: time.Hour}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlerr.Located(path, err)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: the policy is empty: it needs a rules list", path)
	}
	fail := func(n *yaml.Node, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", path, n.Line, fmt.Sprintf(format, args...))
	}
	var rules *yaml.Node
	err := yamlerr.Fields(doc.Content[0], "the policy", fail, func(key string, _, v *yaml.Node) error {
		switch key {
		case "name":
			return scalar(v, fail, key, &p.Name)
		case "fail_open":
			return boolean(v, fail, key, &p.FailOpen)
		case "max_sessions":
			return positive(v, fail, key, &p.MaxSessions)
		case "session_idle":
			return duration(v, fail, key, &p.SessionIdle)
		case "rules":
			rules = v
			return nil
		}
		return fail(v, "unknown field %q (name, fail_open, max_sessions, session_idle, rules)", key)
	})
	if err != nil {
		return nil, err
	}
	if rules == nil || rules.Kind != yaml.SequenceNode || len(rules.Content) == 0 {
		at := doc.Content[0]
		if rules != nil {
			at = rules
		}
		return nil, fail(at, "rules: a list of rules is required")
	}
	seen := map[string]int{}
	for _, n := range rules.Content {
		r, err := parseRule(n, fail, lookup(extra))
		if err != nil {
			return nil, err
		}
		if first, ok := seen[r.Name]; ok {
			return nil, fail(n, "rule %q is given twice (first on line %d)", r.Name, first)
		}
		seen[r.Name] = r.Line
		p.Rules = append(p.Rules, r)
	}
	if p.Name == "" {
		p.Name = path
	}
	return p, nil
}

type failFunc func(n *yaml.Node, format string, args ...any) error

// lookup finds a detector by name among extra, then the built-in ones.
func lookup(extra []*detect.Detector) func(string) (*detect.Detector, bool) {
	return func(name string) (*detect.Detector, bool) {
		for _, d := range extra {
			if d.Name == name {
				return d, true
			}
		}
		return detect.Lookup(name)
	}
}

func parseRule(n *yaml.Node, fail failFunc, find func(string) (*detect.Detector, bool)) (*Rule, error) {
	r := &Rule{Line: n.Line}
	var detectors []string
	var detectorsAt, whenAt *yaml.Node
	var when string
	err := yamlerr.Fields(n, "a rule", fail, func(key string, _, v *yaml.Node) error {
		switch key {
		case "name":
			return scalar(v, fail, key, &r.Name)
		case "mode":
			return scalar(v, fail, key, &r.Mode)
		case "detectors":
			detectorsAt = v
			return list(v, fail, key, &detectors)
		case "when":
			whenAt = v
			return scalar(v, fail, key, &when)
		case "action":
			var name string
			if err := scalar(v, fail, key, &name); err != nil {
				return err
			}
			a, err := ParseAction(name)
			if err != nil {
				return fail(v, "action: %v", err)
			}
			r.Action = a
			return nil
		case "message":
			return scalar(v, fail, key, &r.Message)
		case "min_confidence":
			if err := number(v, fail, key, &r.MinConfidence); err != nil {
				return err
			}
			if r.MinConfidence < 0 || r.MinConfidence > 1 {
				return fail(v, "min_confidence: a number from 0 to 1")
			}
			return nil
		case "min_steps":
			return positive(v, fail, key, &r.MinSteps)
		case "max_fires":
			return positive(v, fail, key, &r.MaxFires)
		case "budget":
			b, err := parseBudget(v, fail)
			r.Budget = b
			return err
		case "signals":
			var texts []string
			if err := list(v, fail, key, &texts); err != nil {
				return err
			}
			for i, t := range texts {
				re, err := regexp.Compile(t)
				if err != nil {
					return fail(v.Content[i], "signals: %q is not a regular expression: %v", t, err)
				}
				r.Signals = append(r.Signals, re)
			}
			return nil
		}
		return fail(v, "unknown field %q of a rule (name, mode, detectors, budget, signals, when, action, message, min_confidence, min_steps, max_fires)", key)
	})
	if err != nil {
		return nil, err
	}
	if r.Name == "" {
		return nil, fail(n, "a rule needs a name")
	}
	kinds := 0
	for _, set := range []bool{detectorsAt != nil, r.Budget != nil, r.Signals != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return nil, fail(n, "rule %s: give exactly one of detectors, budget and signals", r.Name)
	}
	for i, name := range detectors {
		d, ok := find(name)
		if !ok {
			return nil, fail(detectorsAt.Content[i], "rule %s: no detector %q (faultline detectors lists them, with the rules of your rule file)", r.Name, name)
		}
		r.Detectors = append(r.Detectors, d)
	}
	if detectorsAt != nil && len(r.Detectors) == 0 {
		return nil, fail(detectorsAt, "rule %s: detectors: name at least one", r.Name)
	}
	if err := r.settleMode(n, fail); err != nil {
		return nil, err
	}
	switch when {
	case "", "step":
		// A detector that judges a finished run makes the rule a gate.
		for _, d := range r.Detectors {
			if d.Finished {
				if when == "step" {
					return nil, fail(whenAt, "rule %s: %s judges a run as it ends; it can only run when the agent tries to finish (when: finish)", r.Name, d.Name)
				}
				r.AtFinish = true
			}
		}
	case "finish":
		r.AtFinish = true
	default:
		return nil, fail(whenAt, "rule %s: when: step or finish, not %q", r.Name, when)
	}
	if r.AtFinish && (r.Budget != nil || r.Signals != nil) {
		return nil, fail(whenAt, "rule %s: when: finish applies to detector rules only", r.Name)
	}
	return r, nil
}

// settleMode checks the rule's mode against its detectors', or takes theirs
// (the budget's is FM-1.5, the clarification branch's FM-2.2).
func (r *Rule) settleMode(n *yaml.Node, fail failFunc) error {
	implied := ""
	switch {
	case r.Budget != nil:
		implied = "FM-1.5"
	case r.Signals != nil:
		implied = "FM-2.2"
	default:
		for _, d := range r.Detectors {
			if implied != "" && d.Mode != implied {
				return fail(n, "rule %s: its detectors find different modes (%s, %s); one mode per rule", r.Name, implied, d.Mode)
			}
			implied = d.Mode
		}
	}
	if r.Mode == "" {
		r.Mode = implied
		return nil
	}
	// A user's rule may report a code of its own.
	if _, _, ok := taxonomy.Lookup(r.Mode); !ok && r.Mode != implied {
		return fail(n, "rule %s: unknown mode %q", r.Name, r.Mode)
	}
	if r.Mode != implied && r.Detectors != nil {
		return fail(n, "rule %s: mode %s, but its detectors find %s", r.Name, r.Mode, implied)
	}
	return nil
}

func parseBudget(n *yaml.Node, fail failFunc) (*Budget, error) {
	b := &Budget{WarnAt: 0.8}
	err := yamlerr.Fields(n, "budget", fail, func(key string, _, v *yaml.Node) error {
		switch key {
		case "steps":
			return positive(v, fail, key, &b.Steps)
		case "tokens":
			return positive(v, fail, key, &b.Tokens)
		case "warn_at":
			if err := number(v, fail, key, &b.WarnAt); err != nil {
				return err
			}
			if b.WarnAt <= 0 || b.WarnAt > 1 {
				return fail(v, "warn_at: a fraction above 0 and at most 1 (1: no warning)")
			}
			return nil
		}
		return fail(v, "unknown field %q of a budget (steps, tokens, warn_at)", key)
	})
	if err == nil && b.Steps == 0 && b.Tokens == 0 {
		err = fail(n, "budget: give steps, tokens or both")
	}
	return b, err
}

func scalar(v *yaml.Node, fail failFunc, key string, out *string) error {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return fail(v, "%s: a string", key)
	}
	*out = v.Value
	return nil
}

func list(v *yaml.Node, fail failFunc, key string, out *[]string) error {
	if v.Kind != yaml.SequenceNode {
		return fail(v, "%s: a list", key)
	}
	for _, e := range v.Content {
		var s string
		if err := scalar(e, fail, key, &s); err != nil {
			return err
		}
		*out = append(*out, s)
	}
	return nil
}

func boolean(v *yaml.Node, fail failFunc, key string, out *bool) error {
	b, err := strconv.ParseBool(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil {
		return fail(v, "%s: true or false", key)
	}
	*out = b
	return nil
}

func number(v *yaml.Node, fail failFunc, key string, out *float64) error {
	f, err := strconv.ParseFloat(v.Value, 64)
	if v.Kind != yaml.ScalarNode || err != nil {
		return fail(v, "%s: a number", key)
	}
	*out = f
	return nil
}

func positive(v *yaml.Node, fail failFunc, key string, out *int) error {
	i, err := strconv.Atoi(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil || i <= 0 {
		return fail(v, "%s: a whole number above 0", key)
	}
	*out = i
	return nil
}

func duration(v *yaml.Node, fail failFunc, key string, out *time.Duration) error {
	d, err := time.ParseDuration(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil || d <= 0 {
		return fail(v, "%s: a duration such as 30m or 2h", key)
	}
	*out = d
	return nil
}
