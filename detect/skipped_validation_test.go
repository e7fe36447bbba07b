package detect

import "testing"

func TestSkippedValidation(t *testing.T) {
	const update = `call apply_patch {"input":"*** Begin Patch\n*** Update File: agent_output.json\n@@\n-a\n+b\n*** End Patch"} => Success.`
	runCases(t, SkippedValidation, []detCase{
		{name: "validated", trace: build(zeroTask, `user go`, readAlerts, writeAnswer, validate)},
		{name: "never validated", trace: build(zeroTask, `instr You must validate json using `+"`jq`"+` in shell after writing the file.`, `user go`, readAlerts, writeAnswer, `final done`),
			want: [][]int{{0, 4}}, quote: "validate json using `jq", conf: 0.85},
		{name: "validated, then changed", trace: build(zeroTask, `user go`, readAlerts, writeAnswer, validate, update),
			want: [][]int{{7}}, quote: "agent_output.json", conf: 0.6},
		{name: "no validator required", trace: build(`task Write your diagnosis to agent_output.json.`, `user go`, readAlerts, writeAnswer)},
		{name: "a write and a check in one command", trace: build(zeroTask, `user go`, `call shell {"command":["bash","-lc","echo '{}' > agent_output.json && jq . agent_output.json"]} => {}`)},
		{name: "a failed check is not a skipped one", trace: build(zeroTask, `user go`, writeAnswer, `fail shell {"cmd":"jq . agent_output.json"} => jq: parse error`)},
	})
}
