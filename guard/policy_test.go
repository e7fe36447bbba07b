package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline/faultline/detect"
)

func TestParsePolicy(t *testing.T) {
	p, err := Parse("guard.yaml", []byte(`name: sre
fail_open: false
max_sessions: 50
session_idle: 10m
rules:
  - name: loops
    detectors: [repeated-tool-call]
    min_steps: 3
    action: inject
    message: You ran this before and got the same answer.
  - name: budget
    budget: {steps: 100, tokens: 5000, warn_at: 0.5}
    action: block
  - name: gate
    detectors: [missing-answer]
    action: inject
    max_fires: 2
  - name: ask
    signals: ['(?i)either .* or']
`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "sre" || p.FailOpen || p.MaxSessions != 50 || p.SessionIdle != 10*time.Minute || len(p.Rules) != 4 {
		t.Fatalf("policy %+v", p)
	}
	loops, budget, gate, ask := p.Rules[0], p.Rules[1], p.Rules[2], p.Rules[3]
	if loops.Mode != "FM-1.3" || loops.Action != Inject || loops.MinSteps != 3 || loops.AtFinish || loops.Line != 6 {
		t.Errorf("loops %+v", loops)
	}
	if budget.Mode != "FM-1.5" || budget.Budget.Steps != 100 || budget.Budget.Tokens != 5000 || budget.Budget.WarnAt != 0.5 || budget.Action != Block {
		t.Errorf("budget %+v %+v", budget, budget.Budget)
	}
	if gate.Mode != "FM-3.1" || !gate.AtFinish || gate.MaxFires != 2 {
		t.Errorf("a rule of a detector that judges a finished run is a gate: %+v", gate)
	}
	if ask.Mode != "FM-2.2" || len(ask.Signals) != 1 || ask.Action != Observe {
		t.Errorf("ask %+v", ask)
	}
}

func TestParsePolicyErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"syntax", "rules:\n  - name: a\n   detectors: [x]\n", "p.yaml:1: did not find expected '-' indicator"},
		{"empty", "", "p.yaml: the policy is empty"},
		{"no rules", "name: x\n", "p.yaml:1: rules: a list of rules is required"},
		{"unknown top field", "rule:\n  - name: a\n", `p.yaml:2: unknown field "rule"`},
		{"unknown rule field", "rules:\n  - name: a\n    detector: [repeated-tool-call]\n", `p.yaml:3: unknown field "detector" of a rule`},
		{"unknown detector", "rules:\n  - name: a\n    detectors: [repeated-tool-cal]\n", `p.yaml:3: rule a: no detector "repeated-tool-cal"`},
		{"no name", "rules:\n  - detectors: [repeated-tool-call]\n", "p.yaml:2: a rule needs a name"},
		{"two kinds", "rules:\n  - name: a\n    detectors: [repeated-tool-call]\n    budget: {steps: 3}\n", "p.yaml:2: rule a: give exactly one of detectors, budget and signals"},
		{"no kind", "rules:\n  - name: a\n    action: block\n", "p.yaml:2: rule a: give exactly one"},
		{"bad action", "rules:\n  - name: a\n    detectors: [repeated-tool-call]\n    action: stop\n", `p.yaml:4: action: unknown action "stop"`},
		{"mixed modes", "rules:\n  - name: a\n    detectors: [repeated-tool-call, missing-answer]\n", "p.yaml:2: rule a: its detectors find different modes (FM-1.3, FM-3.1)"},
		{"wrong mode", "rules:\n  - name: a\n    mode: FM-2.2\n    detectors: [repeated-tool-call]\n", "p.yaml:2: rule a: mode FM-2.2, but its detectors find FM-1.3"},
		{"unknown mode", "rules:\n  - name: a\n    mode: FM-9.9\n    budget: {steps: 3}\n", `p.yaml:2: rule a: unknown mode "FM-9.9"`},
		{"gate as step rule", "rules:\n  - name: a\n    detectors: [missing-answer]\n    when: step\n", "p.yaml:4: rule a: missing-answer judges a run as it ends"},
		{"bad when", "rules:\n  - name: a\n    detectors: [repeated-tool-call]\n    when: sometimes\n", `p.yaml:4: rule a: when: step or finish, not "sometimes"`},
		{"budget at finish", "rules:\n  - name: a\n    budget: {steps: 3}\n    when: finish\n", "p.yaml:4: rule a: when: finish applies to detector rules only"},
		{"empty budget", "rules:\n  - name: a\n    budget: {warn_at: 0.5}\n", "p.yaml:3: budget: give steps, tokens or both"},
		{"bad warn_at", "rules:\n  - name: a\n    budget: {steps: 3, warn_at: 2}\n", "p.yaml:3: warn_at: a fraction"},
		{"bad regexp", "rules:\n  - name: a\n    signals: ['(unclosed']\n", `p.yaml:3: signals: "(unclosed" is not a regular expression`},
		{"twice", "rules:\n  - name: a\n    budget: {steps: 3}\n  - name: a\n    budget: {steps: 4}\n", `p.yaml:4: rule "a" is given twice (first on line 2)`},
		{"field twice", "rules:\n  - name: a\n    name: b\n    budget: {steps: 3}\n", `p.yaml:3: "name" is given twice`},
		{"confidence", "rules:\n  - name: a\n    detectors: [repeated-tool-call]\n    min_confidence: 1.5\n", "p.yaml:4: min_confidence: a number from 0 to 1"},
		{"negative", "rules:\n  - name: a\n    detectors: [repeated-tool-call]\n    min_steps: -1\n", "p.yaml:4: min_steps: a whole number above 0"},
		{"idle", "session_idle: soon\nrules:\n  - name: a\n    budget: {steps: 3}\n", "p.yaml:1: session_idle: a duration"},
		{"rule not a mapping", "rules:\n  - loops\n", "p.yaml:2: a rule must be a mapping of fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to hold %q", err, tt.want)
			}
		})
	}
}

// The shipped example policy loads.
func TestExamplePolicy(t *testing.T) {
	path := filepath.Join("..", "examples", "guard.yaml")
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rules) < 5 {
		t.Errorf("%d rules", len(p.Rules))
	}
}

func TestLoadMissing(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "none.yaml"))
	if err == nil || !strings.Contains(err.Error(), "none.yaml") {
		t.Errorf("error %v", err)
	}
}

// FuzzParse: whatever the file holds, Parse returns a policy or an error
// naming the file, and never panics; a policy it returns has rules that
// each apply one kind of check.
func FuzzParse(f *testing.F) {
	example, err := os.ReadFile(filepath.Join("..", "examples", "guard.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Add([]byte("rules:\n  - name: a\n    budget: {steps: 3, warn_at: 0.5}\n    action: block\n"))
	f.Add([]byte("rules:\n  - name: a\n    signals: ['(?i)either']\n  - name: b\n    detectors: [missing-answer]\n    when: finish\n"))
	f.Add([]byte("rules: [{name: a, detectors: [repeated-tool-call], min_steps: 2, max_fires: 1}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("f.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Errorf("error without the file: %v", err)
			}
			return
		}
		for _, r := range p.Rules {
			kinds := 0
			if r.Detectors != nil {
				kinds++
			}
			if r.Budget != nil {
				kinds++
			}
			if r.Signals != nil {
				kinds++
			}
			if kinds != 1 || r.Name == "" || r.Mode == "" {
				t.Errorf("rule %+v", r)
			}
		}
	})
}

// A policy may name detectors besides the built-in ones (a user's rules),
// and take their mode, even a code of the user's own; a finished-run one
// makes its rule a gate.
func TestParsePolicyExtraDetectors(t *testing.T) {
	mine := &detect.Detector{Name: "shell-failed", Mode: "OPS-1", Run: func(*detect.Pass) {}}
	ending := &detect.Detector{Name: "no-report", Mode: "FM-3.1", Run: func(*detect.Pass) {}, Finished: true}
	p, err := Parse("p.yaml", []byte("rules:\n  - name: a\n    detectors: [shell-failed]\n  - name: b\n    detectors: [no-report]\n"), mine, ending)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := p.Rules[0], p.Rules[1]; a.Mode != "OPS-1" || a.Detectors[0] != mine || a.AtFinish || b.Mode != "FM-3.1" || !b.AtFinish {
		t.Errorf("rules %+v, %+v", a, b)
	}
	if _, err := Parse("p.yaml", []byte("rules:\n  - name: a\n    mode: OPS-2\n    detectors: [shell-failed]\n"), mine); err == nil || !strings.Contains(err.Error(), `p.yaml:2: rule a: unknown mode "OPS-2"`) {
		t.Errorf("a mode neither known nor the detector's: %v", err)
	}
}
