package guard

import (
	"fmt"
	"testing"

	"github.com/faultline/faultline/trace"
)

func TestTurns(t *testing.T) {
	run := &trace.Trace{}
	for _, s := range []trace.Step{
		{Kind: trace.KindMessage, Role: trace.RoleUser, Text: "task"},
		say("looking"), call("a", "ls"), call("b", "pwd"),
		result("a", "x"), result("b", "/"),
		say("done"),
		{Kind: trace.KindSystem, Role: trace.RoleHarness, Type: trace.TypeEmptyTurn},
		{Kind: trace.KindMessage, Role: trace.RoleHarness, Text: "continue"},
		{Kind: trace.KindMessage, Role: trace.RoleHarness, Text: "continue, please"},
		{Kind: trace.KindSystem, Role: trace.RoleHarness, Type: trace.TypeEmptyTurn},
	} {
		run.Append(s)
	}
	// The harness prompted twice in a row: the model said nothing to the
	// first prompt, a stretch of its own.
	got := fmt.Sprint(Turns(run))
	if want := "[{0 1 false false} {1 4 true false} {4 6 false false} {6 7 true false} {7 9 false true} {9 11 false false}]"; got != want {
		t.Errorf("turns %s, want %s", got, want)
	}
	tests := []struct {
		name             string
		from, to         int
		agent, usesTools bool
		want             bool
	}{
		{"calls", 1, 4, true, true, false},
		{"speaks in a run of tools", 6, 7, true, true, true},
		{"speaks in a chat without tools", 6, 7, true, false, false},
		{"results", 4, 6, false, true, false},
		{"an empty model turn", 7, 8, false, true, true},
	}
	for _, tt := range tests {
		if got := finishes(run.Steps[tt.from:tt.to], tt.agent, tt.usesTools); got != tt.want {
			t.Errorf("%s: %v", tt.name, got)
		}
	}
	final := []trace.Step{{Kind: trace.KindFinal, Role: trace.RoleAssistant, Text: "answer"}}
	if !finishes(final, true, false) {
		t.Error("a final answer does not finish")
	}
}

// Replay hides what the run left behind, and tallies per rule by outcome.
func TestReplayAndTally(t *testing.T) {
	p := &Policy{Rules: []*Rule{
		{Name: "gate", Mode: "FM-3.1", Detectors: detectors("missing-answer"), AtFinish: true},
		{Name: "loops", Mode: "FM-1.3", Detectors: detectors("repeated-tool-call"), MinSteps: 2},
	}}
	build := func(writes bool) *trace.Trace {
		run := &trace.Trace{ID: "r", Format: "codex", Task: "Write your diagnosis to: /out/agent_output.json"}
		run.Append(call("a", "kubectl get pods"))
		run.Append(result("a", "cart CrashLoopBackOff"))
		run.Append(call("b", "kubectl get pods"))
		run.Append(result("b", "cart CrashLoopBackOff"))
		if writes {
			run.Append(call("c", `echo '{"entities": [{"name": "cart", "contributing_factor": true}]}' > /out/agent_output.json`))
			run.Append(result("c", ""))
		}
		run.Append(say("The cart deployment is the cause."))
		run.Append(say("(more text nobody needed)"))
		run.Append(trace.Step{Kind: trace.KindSystem, Role: trace.RoleHarness, Text: "the end"})
		// The run directory's copy of the answer: unseen at run time.
		run.Diagnosis = &trace.Diagnosis{Source: "/out/agent_output.json", Body: `{"entities": []}`}
		run.Link()
		return run
	}
	failed := build(false)
	s := Replay(failed, p)
	var rules []string
	for _, d := range s.Decisions() {
		rules = append(rules, fmt.Sprintf("%s@%d", d.Rule, d.Step))
	}
	if got := fmt.Sprint(rules); got != "[loops@3 gate@5]" {
		t.Errorf("decisions %s", got)
	}

	tally := NewTally(p)
	no, yes := false, true
	tally.Add(failed, s, &no)
	ok := build(true)
	tally.Add(ok, Replay(ok, p), &yes)
	tally.Add(ok, Replay(ok, p), nil)
	if tally.Runs != 3 || tally.Failed != 1 || tally.Succeeded != 1 {
		t.Errorf("tally %+v", tally)
	}
	gate, loops := tally.Rules[0], tally.Rules[1]
	if gate.Failed != 1 || gate.Succeeded != 0 || gate.Unknown != 0 || gate.StepsAfter != 1 || gate.MedianLead() != 1 {
		t.Errorf("gate %+v", gate)
	}
	if loops.Failed != 1 || loops.Succeeded != 1 || loops.Unknown != 1 || loops.Decisions != 3 || loops.StepsAfter != 3 {
		t.Errorf("loops %+v", loops)
	}
	if !tally.TokensEstimated || loops.TokensAfter == 0 {
		t.Errorf("tokens: estimated %v, %d after", tally.TokensEstimated, loops.TokensAfter)
	}
}
