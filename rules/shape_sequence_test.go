package rules

import (
	"testing"

	"github.com/faultline/faultline/trace"
)

func TestSequenceShape(t *testing.T) {
	// A delete, then the agent declares success two steps later.
	deleted := build(
		call("shell", "kubectl delete pod cart-1"),                  // 0
		result("shell", "pod deleted", 0),                           // 1
		msg(trace.RoleAssistant, "Fixed: the cart pod is healthy."), // 2
		call("shell", "kubectl delete pod ad-1"),                    // 3
		result("shell", "pod deleted", 0),                           // 4
		call("shell", "kubectl get pods"),                           // 5
		result("shell", "ad-1 Running", 0),                          // 6
		msg(trace.RoleAssistant, "Fixed."),                          // 7
	)
	shape := func(within string) string {
		return "sequence:\n  first:\n    args: kubectl delete\n  then:\n    kind: message\n    text: Fixed\n  within: " + within + "\n"
	}
	cases := []shapeCase{
		{"within reach", shape("2"), deleted, [][]int{{0, 2}}},
		{"wider window pairs both", shape("4"), deleted, [][]int{{0, 2, 3, 7}}},
		{"too far apart", shape("1"), deleted, nil},
		{"then before first", "sequence:\n  first:\n    text: healthy\n  then:\n    args: delete pod cart\n  within: 5\n", deleted, nil},
		// Two first-steps waiting share one then-step: both are paired with it.
		{"pending pair with the first then", "sequence:\n  first:\n    kind: tool_call\n  then:\n    text: Fixed\n  within: 4\n", deleted, [][]int{{0, 2, 3, 5, 7}}},
		// The then-step is the first match after first: a later one does not pair.
		{"only the first then", "sequence:\n  first:\n    args: delete pod ad\n  then:\n    kind: tool_result\n  within: 1\n", deleted, [][]int{{3, 4}}},
	}
	runShapeCases(t, cases)
}

func TestSequenceSelfMatch(t *testing.T) {
	// A step matching both first and then does not pair with itself, but
	// closes the steps before it and opens its own wait.
	tr := build(call("shell", "x"), call("shell", "x"), call("shell", "x"))
	fs := run(t, mustParse(t, rule("sequence:\n  first:\n    tool: shell\n  then:\n    tool: shell\n  within: 1\n")), tr)
	if len(fs) != 1 || !equalSteps([][]int{fs[0].Steps}, [][]int{{0, 1, 2}}) {
		t.Fatalf("findings %+v", fs)
	}
	if want := "rule r: step 0 (first) was followed by step 1 (then), 1 step later (within 1); 2 such pairs in all."; fs[0].Explanation != want {
		t.Errorf("explanation %q, want %q", fs[0].Explanation, want)
	}
}
