package detect

import "testing"

func TestIgnoredValidationFailure(t *testing.T) {
	const bad = `fail shell {"cmd":"jq . agent_output.json"} => jq: parse error: Invalid literal at line 8, column 123`
	runCases(t, IgnoredValidationFailure, []detCase{
		{name: "validated", trace: build(zeroTask, `user go`, writeAnswer, validate)},
		{name: "failed, fixed, passed", trace: build(zeroTask, `user go`, writeAnswer, bad, writeAnswer, validate)},
		{name: "failed and ignored", trace: build(zeroTask, `user go`, writeAnswer, bad, `final The diagnosis is in agent_output.json.`),
			want: [][]int{{3, 4}}, quote: "jq: parse error: Invalid literal at line 8, column 123", conf: 0.85},
		{name: "failed and claimed valid", trace: build(zeroTask, `user go`, writeAnswer, bad, `final Wrote agent_output.json and validated it with jq.`),
			want: [][]int{{3, 4, 5}}, conf: 0.95},
		{name: "exit 0 with a parse error in the output still failed", trace: build(zeroTask, `user go`, writeAnswer, `call shell {"cmd":"jq . agent_output.json || true"} => jq: parse error: x`),
			want: [][]int{{3, 4}}},
		{name: "failed, then rewritten and never checked, is FM-3.2's", trace: build(zeroTask, `user go`, writeAnswer, bad, writeAnswer)},
	})
}
