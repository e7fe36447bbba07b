// Package guard applies the interventions the MAST study recommends while an
// agent runs, rather than after: loop control, a step and token budget with
// an explicit end, an answer gate and a verification gate before the agent
// may finish, and a clarification branch for ambiguous tasks.
//
// It runs the same detectors as offline analysis (package detect) over the
// run as it grows: after each model turn and each tool result, a Session
// appends the new steps and runs the policy's detectors over the run so far.
// Detectors that judge a finished run (detect.Detector.Finished) run only when
// the agent tries to finish. Each rule of a Policy turns what they report
// into a Decision with an action: observe (record only), annotate, inject a
// corrective message, or block.
//
// The proxy (faultline guard) and Go agents that call a Session between
// their turns share this code; Replay feeds a recorded trace through it turn
// by turn, to see where a policy would have fired.
package guard

import (
	"fmt"
	"time"
)

// Action is what a rule does when it fires. Actions are ordered: each
// does what the one before it does and more.
type Action int

const (
	// Observe records the decision and changes nothing.
	Observe Action = iota
	// Annotate also marks the response (the proxy sets a header) and the
	// run's trace.
	Annotate
	// Inject also adds the rule's message to what the agent reads next: the
	// next request, or, at a gate, a request made again before the agent
	// may finish.
	Inject
	// Block refuses: the proxy answers with an error and ends the session.
	Block
)

var actionNames = []string{"observe", "annotate", "inject", "block"}

func (a Action) String() string {
	if a < 0 || int(a) >= len(actionNames) {
		return fmt.Sprintf("Action(%d)", int(a))
	}
	return actionNames[a]
}

// MarshalText writes the action's name.
func (a Action) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText reads an action's name.
func (a *Action) UnmarshalText(b []byte) error {
	v, err := ParseAction(string(b))
	if err == nil {
		*a = v
	}
	return err
}

// ParseAction reads an action's name.
func ParseAction(s string) (Action, error) {
	for i, n := range actionNames {
		if s == n {
			return Action(i), nil
		}
	}
	return 0, fmt.Errorf("unknown action %q (one of observe, annotate, inject, block)", s)
}

// Decision is one firing of a rule: where in the run, on what evidence, and
// what was done.
type Decision struct {
	Session string `json:"session,omitempty"`
	Rule    string `json:"rule"`
	Mode    string `json:"mode"`
	// Detector is the detector whose finding fired the rule; empty for the
	// budget and the clarification branch, which are the guard's own.
	Detector string `json:"detector,omitempty"`
	// Action is what was done: the rule's action, or observe once the rule
	// has fired its most times in the session.
	Action Action `json:"action"`
	// Step is the last step of the run when the rule fired; Steps are those
	// the evidence cites, Quote a verbatim excerpt of one of them.
	Step        int       `json:"step"`
	Steps       []int     `json:"steps,omitempty"`
	Quote       string    `json:"quote,omitempty"`
	Explanation string    `json:"explanation"`
	Message     string    `json:"message,omitempty"` // what inject adds or block answers
	Finishing   bool      `json:"finishing,omitempty"`
	Time        time.Time `json:"time,omitzero"`
}
