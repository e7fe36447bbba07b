package detect

import "testing"

func TestUnbackedPlanStep(t *testing.T) {
	plan := func(status string) string {
		return `call update_plan {"plan":[{"step":"Read alerts","status":"completed"},{"step":"Validate JSON with jq","status":"` + status + `"}]} => ok`
	}
	runCases(t, UnbackedPlanStep, []detCase{
		{name: "done and backed", trace: build(zeroTask, `user go`, plan("pending"), writeAnswer, validate, plan("completed"))},
		{name: "done without the call it names", trace: build(zeroTask, `user go`, plan("pending"), writeAnswer, plan("completed")),
			want: [][]int{{5}}, quote: "Validate JSON with jq", conf: 0.7},
		{name: "added already done", trace: build(`user go`, `call update_plan {"plan":[{"step":"Summarise with alert_summary","status":"completed"}]} => ok`, `call alert_summary {} => x`),
			want: [][]int{{1}}},
		{name: "a tool named in words that was never called", trace: build(`user go`, `call shell {"cmd":"ls"} => a`, `call update_plan {"plan":[{"step":"Trace the failing requests with get_trace_error_tree","status":"completed"}]} => ok`),
			want: [][]int{{3}}, quote: "Trace the failing requests with get_trace_error_tree"},
		{name: "thinking steps are not judged", trace: build(`user go`, `call update_plan {"plan":[{"step":"Build the causal chain","status":"completed"}]} => ok`)},
		{name: "a backing call that failed still counts", trace: build(`user go`, `fail shell {"cmd":"jq . out.json"} => parse error`, `call update_plan {"plan":[{"step":"Check out.json","status":"completed"}]} => ok`)},
		{name: "reported once, when it turns completed", trace: build(`user go`, plan("completed"), plan("completed"), `call jq_tool {} => x`),
			want: [][]int{{1}}},
	})
}
