package rules

import (
	"fmt"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

func TestMatchShape(t *testing.T) {
	denied := build(
		msg(trace.RoleUser, "fix the cluster"),
		call("shell", `{"command":["kubectl","get","pods"]}`),
		result("shell", "error: You must be logged in to the server (Unauthorized)", 1),
		call("shell", `{"command":["kubectl","get","nodes"]}`),
		result("shell", "error: You must be logged in to the server (Unauthorized)", 1),
		msg(trace.RoleAssistant, "The cluster looks fine."),
	)
	var many []trace.Step
	for i := 0; i < 30; i++ {
		many = append(many, result("shell", "boom", 2))
	}
	cases := []shapeCase{
		{"text regex", "match:\n  kind: tool_result\n  text: Unauthorized\n", denied, [][]int{{2, 4}}},
		{"no match", "match:\n  kind: tool_result\n  text: Forbidden\n", denied, nil},
		{"args regex on calls", "match:\n  tool: shell\n  args: kubectl.*nodes\n", denied, [][]int{{3}}},
		{"kind list", "match:\n  kind: [message, final]\n  role: assistant\n", denied, [][]int{{5}}},
		{"exit nonzero", "match:\n  exit: nonzero\n", denied, [][]int{{2, 4}}},
		{"exit zero holds on no step here", "match:\n  exit: zero\n", denied, nil},
		{"exit list", "match:\n  exit: [2, 1]\n", denied, [][]int{{2, 4}}},
		{"not", "match:\n  kind: tool_call\n  not:\n    args: nodes\n", denied, [][]int{{1}}},
		{"by_agent", "match:\n  by_agent: true\n  kind: message\n", denied, [][]int{{5}}},
		{"error false", "match:\n  kind: tool_result\n  error: false\n", denied, nil},
		{"any over text or args", "match:\n  any: (?i)unauthorized|get nodes\n", denied, [][]int{{2, 4}}},
		{"cap at 20 steps", "match:\n  text: boom\n", build(many...), [][]int{seq(0, 20)}},
	}
	runShapeCases(t, cases)
}

func seq(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

func TestMatchQuoteAndExplanation(t *testing.T) {
	long := strings.Repeat("é", 150) // 300 bytes of two-byte runes
	tr := build(
		result("shell", "prefix "+long+" suffix", 1),
		call("shell", `{"command":["ls"]}`),
	)
	tests := []struct {
		shape string
		quote string
	}{
		// A regex match is quoted, clipped at a rune boundary.
		{"match:\n  text: 'é+'\n", strings.Repeat("é", 100)},
		// Without a regex, the start of the text, then of the arguments.
		{"match:\n  exit: 1\n", "prefix " + strings.Repeat("é", 96)},
		{"match:\n  kind: tool_call\n", `{"command":["ls"]}`},
		{"match:\n  args: ls\n", "ls"},
	}
	for _, tt := range tests {
		fs := run(t, mustParse(t, rule(tt.shape)), tr)
		if len(fs) != 1 {
			t.Fatalf("%q: %d findings", tt.shape, len(fs))
		}
		if fs[0].Quote != tt.quote {
			t.Errorf("%q: quote %q, want %q", tt.shape, fs[0].Quote, tt.quote)
		}
		if len(fs[0].Quote) > maxQuote {
			t.Errorf("quote of %d bytes", len(fs[0].Quote))
		}
	}
	fs := run(t, mustParse(t, rule("match:\n  tool: shell\n")), tr)
	if want := "rule r: 2 steps matched; first at step 0."; fs[0].Explanation != want {
		t.Errorf("explanation %q, want %q", fs[0].Explanation, want)
	}
	var steps []trace.Step
	for i := 0; i < 25; i++ {
		steps = append(steps, call("shell", fmt.Sprint(i)))
	}
	fs = run(t, mustParse(t, rule("match:\n  tool: shell\n")), build(steps...))
	if want := "rule r: 25 steps matched; first at step 0 (the first 20 cited)."; fs[0].Explanation != want {
		t.Errorf("explanation %q, want %q", fs[0].Explanation, want)
	}
}
