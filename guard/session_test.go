package guard

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/trace"
)

func call(id, command string) trace.Step {
	return trace.Step{Kind: trace.KindToolCall, Role: trace.RoleAssistant, Tool: "shell", CallID: id,
		Args: fmt.Sprintf(`{"command":["bash","-lc",%q]}`, command)}
}

func result(id, out string) trace.Step {
	code := 0
	return trace.Step{Kind: trace.KindToolResult, Role: trace.RoleTool, CallID: id, Text: out, ExitCode: &code}
}

func say(text string) trace.Step {
	return trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant, Text: text}
}

func detectors(names ...string) []*detect.Detector {
	var out []*detect.Detector
	for _, n := range names {
		d, ok := detect.Lookup(n)
		if !ok {
			panic(n)
		}
		out = append(out, d)
	}
	return out
}

// The third identical call with an identical result fires loop control, once
// per group of repeats, and its message waits for the next request.
func TestLoopControl(t *testing.T) {
	p := &Policy{Rules: []*Rule{{Name: "loops", Mode: "FM-1.3", Detectors: detectors("repeated-tool-call"), MinSteps: 3, Action: Inject, Message: "stop repeating"}}}
	s := NewSession("s1", p, Start{Task: "Find why the cart service fails."})
	var fired []Decision
	for i := range 4 {
		id := fmt.Sprintf("c%d", i)
		if d := s.Observe([]trace.Step{call(id, "kubectl get pods -n shop")}, 0, false); len(d) > 0 {
			t.Fatalf("a call alone fired %v", d)
		}
		fired = append(fired, s.Observe([]trace.Step{result(id, "cart 0/1 CrashLoopBackOff")}, 0, false)...)
		if i == 1 && len(fired) > 0 {
			t.Fatalf("two calls fired %v", fired)
		}
	}
	if len(fired) != 1 {
		t.Fatalf("decisions %+v, want one", fired)
	}
	d := fired[0]
	if d.Rule != "loops" || d.Mode != "FM-1.3" || d.Detector != "repeated-tool-call" || d.Action != Inject || d.Message != "stop repeating" || d.Step != 5 {
		t.Errorf("decision %+v", d)
	}
	if got := fmt.Sprint(d.Steps); got != "[0 2 4]" {
		t.Errorf("steps %s, want the three calls", got)
	}
	if inj := s.TakeInjections(); len(inj) != 1 || inj[0].Rule != "loops" {
		t.Errorf("injections %+v", inj)
	}
	if inj := s.TakeInjections(); len(inj) != 0 {
		t.Errorf("injections delivered twice: %+v", inj)
	}
	// One that never reached the agent is taken again.
	s.Requeue(fired)
	if inj := s.TakeInjections(); len(inj) != 1 || inj[0].Rule != "loops" {
		t.Errorf("requeued injections %+v", inj)
	}
	if s.Ended() != nil {
		t.Error("an inject ended the session")
	}
}

// The budget warns at its fraction (never blocking then) and applies its
// action at the limit, which ends the session when it blocks.
func TestBudget(t *testing.T) {
	tests := []struct {
		name       string
		budget     Budget
		tokens     int
		wantWarnAt int // step count at the warning, 0 for none
		wantStopAt int
	}{
		{"steps", Budget{Steps: 10, WarnAt: 0.5}, 0, 5, 10},
		{"tokens", Budget{Tokens: 1000, WarnAt: 0.8}, 100, 8, 10},
		{"no warning", Budget{Steps: 6, WarnAt: 1}, 0, 0, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Policy{Rules: []*Rule{{Name: "budget", Mode: "FM-1.5", Budget: &tt.budget, Action: Block}}}
			s := NewSession("s", p, Start{})
			warnAt, stopAt := 0, 0
			for i := 1; i <= 12; i++ {
				for _, d := range s.Observe([]trace.Step{say(fmt.Sprintf("step %d", i))}, tt.tokens, false) {
					switch d.Action {
					case Inject:
						if warnAt != 0 {
							t.Errorf("warned twice")
						}
						warnAt = i
					case Block:
						if stopAt != 0 {
							t.Errorf("stopped twice")
						}
						stopAt = i
					default:
						t.Errorf("decision %+v", d)
					}
				}
			}
			if warnAt != tt.wantWarnAt || stopAt != tt.wantStopAt {
				t.Errorf("warned at %d, stopped at %d; want %d, %d", warnAt, stopAt, tt.wantWarnAt, tt.wantStopAt)
			}
			if e := s.Ended(); e == nil || e.Rule != "budget" || !strings.Contains(e.Explanation, "spent its budget") {
				t.Errorf("ended %+v", e)
			}
		})
	}
}

// A gate judges each attempt to finish, acts at most MaxFires times and then
// only observes; between attempts it stays silent.
func TestAnswerGate(t *testing.T) {
	p := &Policy{Rules: []*Rule{{Name: "gate", Mode: "FM-3.1", Detectors: detectors("missing-answer"), AtFinish: true, Action: Inject, MaxFires: 2}}}
	s := NewSession("s", p, Start{Task: "Investigate the incident. Write your diagnosis to: /work/out/agent_output.json"})
	s.Observe([]trace.Step{call("c1", "kubectl get events")}, 0, false)
	if d := s.Observe([]trace.Step{result("c1", "BackOff restarting failed container cart")}, 0, false); len(d) != 0 {
		t.Fatalf("the gate fired before any attempt to finish: %+v", d)
	}
	var actions []Action
	for range 3 {
		ds := s.Observe([]trace.Step{say("The cart service is crash looping; that is the root cause.")}, 0, true)
		if len(ds) != 1 {
			t.Fatalf("decisions %+v, want one per attempt", ds)
		}
		if !ds[0].Finishing || !strings.Contains(ds[0].Explanation, "agent_output.json") {
			t.Errorf("decision %+v", ds[0])
		}
		actions = append(actions, ds[0].Action)
	}
	if fmt.Sprint(actions) != "[inject inject observe]" {
		t.Errorf("actions %v", actions)
	}
	// Once the file is written (and read back), the gate lets the run end.
	s.Observe([]trace.Step{call("c2", `cat > /work/out/agent_output.json <<'EOF'
{"entities": [{"name": "otel-demo/Deployment/cart", "contributing_factor": true}]}
EOF`)}, 0, false)
	s.Observe([]trace.Step{result("c2", "")}, 0, false)
	s.Observe([]trace.Step{call("c3", "cat /work/out/agent_output.json")}, 0, false)
	s.Observe([]trace.Step{result("c3", `{"entities": [{"name": "otel-demo/Deployment/cart", "contributing_factor": true}]}`)}, 0, false)
	if ds := s.Observe([]trace.Step{say("Done: the diagnosis is written.")}, 0, true); len(ds) != 0 {
		t.Errorf("the gate fired on a run that wrote its answer: %+v", ds)
	}
}

// The clarification branch looks at the task before the agent's first move,
// and only then.
func TestClarify(t *testing.T) {
	rule := &Rule{Name: "ask", Mode: "FM-2.2", Signals: []*regexp.Regexp{regexp.MustCompile(`(?i)\beither\b`)}, Action: Inject}
	p := &Policy{Rules: []*Rule{rule}}

	s := NewSession("s", p, Start{})
	user := trace.Step{Kind: trace.KindMessage, Role: trace.RoleUser, Text: "Restart either the cart or the checkout deployment."}
	ds := s.Observe([]trace.Step{user}, 0, false)
	if len(ds) != 1 || ds[0].Quote != "either" || fmt.Sprint(ds[0].Steps) != "[0]" || ds[0].Action != Inject {
		t.Fatalf("decisions %+v", ds)
	}
	if ds := s.Observe([]trace.Step{say("Which one?")}, 0, false); len(ds) != 0 {
		t.Errorf("fired again: %+v", ds)
	}

	late := NewSession("late", p, Start{})
	late.Observe([]trace.Step{say("hello")}, 0, false)
	if ds := late.Observe([]trace.Step{user}, 0, false); len(ds) != 0 {
		t.Errorf("fired after the agent had moved: %+v", ds)
	}
}

// Calls and results are paired by call id as they arrive, and a recorded
// pair pointing past the run so far is not trusted.
func TestSessionPairs(t *testing.T) {
	s := NewSession("s", &Policy{}, Start{})
	future := 7
	c := call("a", "ls")
	c.Pair = &future
	s.Observe([]trace.Step{c}, 0, false)
	if s.Steps()[0].Pair != nil {
		t.Fatalf("pair into the future kept")
	}
	r := result("a", "x")
	r.Tool = ""
	s.Observe([]trace.Step{r}, 0, false)
	steps := s.Steps()
	if steps[0].Pair == nil || *steps[0].Pair != 1 || steps[1].Pair == nil || *steps[1].Pair != 0 || steps[1].Tool != "shell" {
		t.Errorf("steps %+v", steps)
	}
}

func TestActionNames(t *testing.T) {
	for _, a := range []Action{Observe, Annotate, Inject, Block} {
		got, err := ParseAction(a.String())
		if err != nil || got != a {
			t.Errorf("%v: %v %v", a, got, err)
		}
	}
	if _, err := ParseAction("stop"); err == nil {
		t.Error("stop parsed")
	}
}
