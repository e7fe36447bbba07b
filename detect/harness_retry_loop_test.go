package detect

import "testing"

func TestHarnessRetryLoop(t *testing.T) {
	const n = `nudge I don't see agent_output.json file.`
	runCases(t, HarnessRetryLoop, []detCase{
		{name: "no nudges", trace: build(`user go`, `say done`)},
		{name: "one nudge, then the agent acts", trace: build(`user go`, `say looking`, n, `call shell {} => ok`)},
		{name: "one nudge and nothing after", trace: build(`user go`, `say looking`, n),
			want: [][]int{{2}}, quote: "I don't see agent_output.json file.", conf: 0.8},
		// Retries 5 and 8 follow turns that came back empty: the model's
		// silence (SYS-1), not the agent stopping as if done.
		{name: "five nudges answered without tools", trace: build(`user go`, `say on it`, n, `say ok`, n, n, `say still`, n, n),
			want: [][]int{{2, 4, 7}}, conf: 0.95},
		{name: "retries after tool results only: a silent model", trace: build(`user go`, `call shell {} => ok`, n, `call shell {} => ok`, n, `call shell {} => ok`, n)},
		{name: "two nudges, recovered", trace: build(`user go`, `say hm`, n, `say ok`, n, `call shell {} => written`),
			want: [][]int{{2, 4}}, conf: 0.7},
		{name: "a model that never answered is left to empty-model-response", trace: build(`user go`, n, n, n, n, n)},
	})
}
