package guard_test

import (
	"fmt"

	"github.com/faultline/faultline/guard"
	"github.com/faultline/faultline/trace"
)

// An agent written in Go asks the guard between its turns: after the model
// answers, and after its tools return. Injected messages go into the next
// prompt; a block ends the run.
func Example() {
	policy := guard.Default()
	s := guard.NewSession("run-1", policy, guard.Start{Task: "Find why checkout fails."})
	for i := range 3 {
		id := fmt.Sprint("call-", i)
		// The model's turn: one tool call, so not an attempt to finish.
		s.Observe([]trace.Step{{Kind: trace.KindToolCall, Role: trace.RoleAssistant, Tool: "shell", CallID: id,
			Args: `{"command":["kubectl","get","pods"]}`}}, 0, false)
		// What the tool returned.
		for _, d := range s.Observe([]trace.Step{{Kind: trace.KindToolResult, Role: trace.RoleTool, CallID: id,
			Text: "checkout 0/1 CrashLoopBackOff"}}, 0, false) {
			fmt.Printf("%s (%s) at step %d: %s\n", d.Rule, d.Action, d.Step, d.Explanation)
		}
	}
	for _, d := range s.TakeInjections() {
		fmt.Println("next prompt gets:", d.Message)
	}
	if s.Ended() != nil {
		fmt.Println("stop the run")
	}
	// Output:
	// loop-control (observe) at step 5: shell was called 3 times with the same arguments and returned the same output each time (first at step 0); the repeats added no information.
}
