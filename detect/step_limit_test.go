package detect

import "testing"

func TestStepLimit(t *testing.T) {
	runCases(t, StepLimit, []detCase{
		{name: "no cap", trace: build(`user go`, `say ok`, `system Executing step 3/20`)},
		{name: "a harness cap event", trace: build(`user go`, `say ok`, `system Terminated: Reached max steps (20)`),
			want: [][]int{{2}}, quote: "Terminated: Reached max steps (20)", conf: 0.85},
		{name: "an error event", trace: build(`user go`, `say ok`, `error error maximum number of turns exceeded`), want: [][]int{{2}}},
		{name: "Inspect's message limit", trace: build(`user go`, `say ok`, `error error message limit reached (50)`), want: [][]int{{2}}},
		{name: "a token budget is no step cap", trace: build(`user go`, `say ok`, `error error token limit reached (10000)`)},
		{name: "the agent's own words are not the harness", trace: build(`user go`, `say I have reached the maximum number of steps I allow myself.`)},
		{name: "buried in a long log", trace: build(`user go`, `say ok`, `system Run summary`+longTail+`\nTerminated: Reached max steps (20)`)},
	})
}
