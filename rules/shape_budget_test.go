package rules

import (
	"testing"

	"github.com/faultline/faultline/trace"
)

func TestBudgetShape(t *testing.T) {
	withTokens := func(n ...int) *trace.Trace {
		var steps []trace.Step
		for i, tok := range n {
			s := msg(trace.RoleAssistant, "turn")
			s.Tokens = tok
			if i%2 == 1 {
				s.Text = ""
				s.Args = "{}"
				s.Kind, s.Tool = trace.KindToolCall, "shell"
			}
			steps = append(steps, s)
		}
		return build(steps...)
	}
	usageOnly := build(msg(trace.RoleUser, "go"), msg(trace.RoleAssistant, "done"))
	usageOnly.Usage.TotalTokens = 5000
	cases := []shapeCase{
		{"steps over", "budget:\n  steps: 3\n", withTokens(0, 0, 0, 0, 0), [][]int{{3}}},
		{"steps at the limit", "budget:\n  steps: 5\n", withTokens(0, 0, 0, 0, 0), nil},
		{"tokens over", "budget:\n  tokens: 100\n", withTokens(50, 40, 20, 10), [][]int{{2}}},
		{"tokens at the limit", "budget:\n  tokens: 120\n", withTokens(50, 40, 20, 10), nil},
		{"both, earliest first", "budget:\n  steps: 3\n  tokens: 60\n", withTokens(50, 40, 20, 10), [][]int{{1, 3}}},
		{"usage when steps carry none", "budget:\n  tokens: 1000\n", usageOnly, [][]int{{1}}},
	}
	runShapeCases(t, cases)
	fs := run(t, mustParse(t, rule("budget:\n  steps: 3\n  tokens: 60\n")), withTokens(50, 40, 20, 10))
	if want := "rule r: the run took 4 steps, over its budget of 3 (passed at step 3), and 120 tokens, over its budget of 60 (passed at step 1)."; fs[0].Explanation != want {
		t.Errorf("explanation %q, want %q", fs[0].Explanation, want)
	}
}
