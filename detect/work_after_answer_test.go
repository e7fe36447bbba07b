package detect

import "testing"

func TestWorkAfterAnswer(t *testing.T) {
	more := []string{
		`call shell {"cmd":"cat /data/snap/7/logs"} => a`, `call shell {"cmd":"cat /data/snap/7/events"} => b`,
		`call shell {"cmd":"cat /data/snap/7/traces"} => c`, `call shell {"cmd":"cat /data/snap/7/metrics"} => d`,
		`call shell {"cmd":"cat /data/snap/7/objects"} => e`,
	}
	runCases(t, WorkAfterAnswer, []detCase{
		{name: "stops after validating", trace: build(zeroTask, `user go`, readAlerts, writeAnswer, validate, `final done`)},
		{name: "five more calls after the validated answer", trace: buildParts(zeroTask, `user go`, readAlerts, writeAnswer, validate, more, `final done`),
			want: [][]int{{5, 7, 9, 11, 13, 15}}, quote: "agent_output.json", conf: 0.6},
		{name: "four more calls are tolerated", trace: buildParts(zeroTask, `user go`, readAlerts, writeAnswer, validate, more[:4])},
		{name: "work before the check does not count", trace: buildParts(zeroTask, `user go`, writeAnswer, more, validate)},
		{name: "plan updates and reads of the answer do not count",
			trace: buildParts(zeroTask, `user go`, writeAnswer, validate, more[:4], `call update_plan {"plan":[]} => ok`, `call shell {"cmd":"cat agent_output.json"} => {}`)},
		{name: "without a validator the last write is the end",
			trace: buildParts(`task Write your diagnosis to: agent_output.json`, `user go`, writeAnswer, more), want: [][]int{{1, 3, 5, 7, 9, 11}}},
	})
}
