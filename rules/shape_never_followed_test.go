package rules

import (
	"testing"

	"github.com/faultline/faultline/trace"
)

func TestNeverFollowedShape(t *testing.T) {
	// A failed call; the agent retries the same thing, then gives up.
	failing := build(
		call("shell", "make test"),          // 0
		result("shell", "FAIL: 3 tests", 1), // 1
		call("shell", "make test"),          // 2
		result("shell", "FAIL: 3 tests", 1), // 3
		msg(trace.RoleAssistant, "Done."),   // 4
	)
	fixed := build(
		call("shell", "make test"),          // 0
		result("shell", "FAIL: 3 tests", 1), // 1
		call("shell", "vi main.go"),         // 2
		result("shell", "", 0),              // 3
		call("shell", "make test"),          // 4
		result("shell", "ok", 0),            // 5
	)
	long := build(
		result("shell", "FAIL", 1), // 0
		msg(trace.RoleAssistant, "thinking"),
		msg(trace.RoleAssistant, "thinking"),
		msg(trace.RoleAssistant, "thinking"),
		result("shell", "ok", 0), // 4
	)
	ever := "never_followed:\n  first:\n    kind: tool_result\n    error: true\n  by:\n    kind: tool_result\n    exit: zero\n"
	within := func(n string) string { return ever + "  within: " + n + "\n" }
	cases := []shapeCase{
		{"never followed at all", ever, failing, [][]int{{1, 3}}},
		{"followed later", ever, fixed, nil},
		{"followed within the window", within("2"), fixed, nil},
		{"followed too late", within("3"), long, [][]int{{0}}},
		{"followed just in time", within("4"), long, nil},
		// The run ends before the window closes: it may yet be followed.
		{"window still open at the end", within("5"), failing, nil},
		{"window closed at the end", within("1"), failing, [][]int{{1, 3}}},
	}
	runShapeCases(t, cases)
}

func TestNeverFollowedFinished(t *testing.T) {
	ever := mustParse(t, rule("never_followed:\n  first:\n    error: true\n  by:\n    error: false\n"))
	if !ever.Rules[0].Detector.Finished {
		t.Error("never_followed without within should judge finished runs only")
	}
	windowed := mustParse(t, rule("never_followed:\n  first:\n    error: true\n  by:\n    error: false\n  within: 3\n"))
	if windowed.Rules[0].Detector.Finished {
		t.Error("never_followed with within fires during a run")
	}
	for _, shape := range []string{"match:\n  error: true\n", "budget:\n  steps: 3\n", "count:\n  match:\n    error: true\n  at_least: 2\n"} {
		if mustParse(t, rule(shape)).Rules[0].Detector.Finished {
			t.Errorf("%q: marked Finished", shape)
		}
	}
}
