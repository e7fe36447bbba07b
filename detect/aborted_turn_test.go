package detect

import "testing"

func TestAbortedTurn(t *testing.T) {
	const abort = `error turn_aborted turn aborted: interrupted`
	runCases(t, AbortedTurn, []detCase{
		{name: "no abort", trace: build(`user go`, `say ok`)},
		{name: "aborted at the end", trace: build(zeroTask, `user go`, readAlerts, abort),
			want: [][]int{{3}}, quote: "turn aborted: interrupted", conf: 0.8},
		{name: "aborted, then the agent went on", trace: build(`user go`, `say ok`, abort, `user go on`, `say fine`),
			want: [][]int{{2}}, conf: 0.55},
		{name: "aborted after the answer was written and validated", trace: build(zeroTask, `user go`, readAlerts, writeAnswer, validate, abort)},
		{name: "aborted after an unvalidated answer", trace: build(zeroTask, `user go`, readAlerts, writeAnswer, abort),
			want: [][]int{{5}}},
		{name: "the model never answered", trace: build(`user go`, abort)},
	})
}
