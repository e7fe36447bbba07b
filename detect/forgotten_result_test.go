package detect

import "testing"

func TestForgottenResult(t *testing.T) {
	const (
		wide   = `call mcp__srv__k8s_spec_change_analysis {"start":"13:30"} => {"changes": [{"object": "otel-demo/Deployment/load-generator", "time": "13:40:50"}, {"object": "otel-demo/ConfigMap/flagd-config", "time": "14:02:11", "field": "adFailure"}]}`
		narrow = `call mcp__srv__k8s_spec_change_analysis {"start":"14:00"} => {"changes": [{"object": "otel-demo/ConfigMap/flagd-config", "time": "14:02:11", "field": "adFailure"}]}`
		logs   = `call mcp__srv__log_analysis {"service":"ad"} => 404 errors: flag adFailure is on`
	)
	runCases(t, ForgottenResult, []detCase{
		{name: "asks again for what it had", trace: build(`user go`, wide, logs, `think I have not yet checked whether any object changed before the errors.`, narrow),
			want: [][]int{{1, 5, 6}}, quote: "I have not yet checked whether any object changed before the errors.", conf: 0.65},
		{name: "a first look is not forgetting", trace: build(`user go`, logs, `think I have not yet checked whether any object changed.`, narrow)},
		{name: "new information is not forgetting", trace: build(`user go`, narrow, `think I haven't looked at the wider window yet.`, wide)},
		{name: "the same request counts even with new output", trace: build(`user go`, logs, `say I haven't checked the ad logs.`, `call mcp__srv__log_analysis {"service":"ad"} => 410 errors now`),
			want: [][]int{{1, 3, 4}}},
		{name: "no claim of ignorance, no finding", trace: build(`user go`, wide, `think Let me narrow the window.`, narrow)},
		{name: "the agent speaks again before calling", trace: build(`user go`, wide, `think I have not yet checked the changes.`, `say Actually I have.`, narrow)},
	})
}
