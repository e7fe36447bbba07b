package detect

import (
	"testing"

	"github.com/faultline/faultline/trace"
)

func TestClaimedExecution(t *testing.T) {
	const fence = "```"
	// chat is a Planner, Coder and Tester chat on a stack task, with the
	// messages under test after the Coder's.
	chat := func(messages ...string) *trace.Trace {
		return build(append([]string{"task Implement a Stack class with tests.", "agent Planner Implement a Stack class with tests.",
			"agent Coder Here is my Stack.\n" + fence + "python\nclass Stack: pass\n" + fence}, messages...)...)
	}
	runCases(t, ClaimedExecution, []detCase{
		{name: "a run of the suite reported and passed", trace: chat("agent Planner Running the Tester's suite against Coder's implementation:\n- test_push → **PASS**\n- test_pop → **PASS**"),
			want: [][]int{{2}}, quote: "Running the Tester's suite against Coder's implementation:", conf: 0.8},
		{name: "a re-run with its result", trace: chat("agent Planner **Step 5 (Tester):** Re-ran full suite against the patched code.\n\n**Result: all tests pass**, including the new one."),
			want: [][]int{{2}}, quote: "**Step 5 (Tester):** Re-ran full suite against the patched code."},
		{name: "all tests pass", trace: chat("agent Tester All 4 tests pass."), want: [][]int{{2}}, quote: "All 4 tests pass."},
		{name: "a complete count", trace: chat("agent Planner Concurrent publish flood: 500/500 delivered exactly once."), want: [][]int{{2}}},
		{name: "every message with a claim is cited", trace: chat("agent Planner New tests — all pass.", "agent Coder Thanks.", "agent Planner Verified by the suite, all passing."),
			want: [][]int{{2, 4}}, quote: "New tests — all pass."},
		{name: "verification by manual tracing", trace: chat("agent Tester I'll verify by manually tracing the code.\n1. push then pop → **PASS**\nAll 2 tests pass.")},
		{name: "verification in the head", trace: chat("agent Tester Running both functions mentally: all tests pass.")},
		{name: "a turn that began by tracing", trace: chat("agent Tester I'll trace through each test.", "agent Tester Continuing: all tests pass.")},
		{name: "a request", trace: chat("agent Planner Tester, please run the suite and confirm all tests pass.")},
		{name: "a prediction", trace: chat("agent Planner All tests should pass once Coder is done.")},
		{name: "one test said to pass", trace: chat("agent Coder `test_full_cycle()` passes with this implementation.")},
		{name: "a denial", trace: chat("agent Tester Not all tests pass.")},
		{name: "a claim inside code", trace: chat("agent Tester " + fence + "python\n# all tests pass\ndef test_all(): pass\n" + fence)},
		{name: "the task statement is not a claim", trace: build("task All 4 tests pass on the old code; port it.", "agent Planner All 4 tests pass on the old code; port it.",
			"agent Coder Here it is.")},
		{name: "a run that executed its tests", trace: chat("call shell {\"command\":\"pytest\"} => 4 passed", "agent Tester All 4 tests pass.")},
		{name: "an executor's report kept as a message", trace: chat("agent Executor exitcode: 0 (execution succeeded)\nCode output: 4 passed", "agent Tester All 4 tests pass.")},
		{name: "an action handed to a harness", trace: chat("agent Executor Thought: run them.\nAction:\n"+fence+"bash\npytest\n"+fence, "agent Executor All 8 tests passed.")},
		{name: "a harness event", trace: chat("system The software run successfully without errors.", "agent Tester All 4 tests pass.")},
	})
}
