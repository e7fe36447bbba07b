package rules

import (
	"testing"

	"github.com/faultline/faultline/trace"
)

func TestRepeatShape(t *testing.T) {
	tr := build(
		call("shell", "kubectl get pods -n x"),   // 0
		call("shell", "kubectl  get pods -n x "), // 1: the same, whitespace aside
		call("other", "kubectl get pods -n x"),   // 2: another tool
		call("shell", "kubectl get svc"),         // 3
		call("shell", "kubectl get pods -n x"),   // 4
		call("shell", "kubectl get svc"),         // 5
		msg(trace.RoleAssistant, "kubectl get svc"),
	)
	cases := []shapeCase{
		{"three identical calls", "repeat:\n  match:\n    kind: tool_call\n  same: [tool, args]\n  times: 3\n", tr, [][]int{{0, 1, 4}}},
		{"two groups of two", "repeat:\n  match:\n    kind: tool_call\n  same: [tool, args]\n  times: 2\n", tr, [][]int{{0, 1, 4}, {3, 5}}},
		{"args only joins tools", "repeat:\n  match:\n    kind: tool_call\n  same: args\n  times: 4\n", tr, [][]int{{0, 1, 2, 4}}},
		{"too few", "repeat:\n  match:\n    kind: tool_call\n  same: [tool, args]\n  times: 4\n", tr, nil},
		{"text of messages", "repeat:\n  match:\n    kind: message\n  same: [text]\n  times: 2\n", tr, nil},
		{"tool alone", "repeat:\n  match:\n    tool: other\n  same: [tool]\n  times: 2\n", tr, nil},
	}
	runShapeCases(t, cases)
}
