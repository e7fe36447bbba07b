package detect

import "testing"

func TestRepeatedToolCall(t *testing.T) {
	runCases(t, RepeatedToolCall, []detCase{
		{name: "different arguments", trace: build(`call shell {"cmd":"ls"} => a`, `call shell {"cmd":"ls -l"} => a`)},
		{name: "same call, same output", trace: build(`call shell {"cmd":"ls"} => a`, `say hm`, `call shell {"cmd": "ls"} => a`),
			want: [][]int{{0, 3}}, quote: `{"cmd":"ls"}`, conf: 0.6},
		{name: "same call, different output is not repetition",
			trace: build(`call metric {"q":"cpu"} => 10`, `call metric {"q":"cpu"} => 12`)},
		{name: "key order and whitespace do not matter",
			trace: build(`call q {"a":1,"b":2} => x  y`, `call q {"b":2, "a":1} => x y`, `call q {"a":1,"b":2} => x y`),
			want:  [][]int{{0, 2, 4}}, quote: `{"a":1,"b":2}`, conf: 0.7},
		{name: "a shell script compares unwrapped from its interpreter",
			trace: build(`call shell {"command":["bash","-lc","cat f"]} => x`, `call shell {"command":"cat f","timeout_ms":1000} => x`),
			want:  [][]int{{0, 2}}},
		{name: "empty arguments quote the tool name",
			trace: build(`call alert_summary {} => 3 alerts`, `call alert_summary {} => 3 alerts`),
			want:  [][]int{{0, 2}}, quote: "alert_summary"},
		{name: "two groups",
			trace: build(`call a {} => 1`, `call b {} => 2`, `call a {} => 1`, `call b {} => 2`),
			want:  [][]int{{0, 4}, {2, 6}}},
		{name: "near-identical: only a number changed, same output",
			trace: build(`call shell {"cmd":"head -n 20 f"} => a\nb`, `call shell {"cmd":"head -n 50 f"} => a\nb`),
			want:  [][]int{{0, 2}}, conf: 0.5},
		{name: "different requests that both found nothing are not repetition",
			trace: build(`call shell {"cmd":"grep 1 f"} => `, `call shell {"cmd":"grep 2 f"} => `)},
		{name: "a re-read of a time-varying value is a weaker finding",
			trace: build(`call get_metrics {"pod":"a"} => 5`, `call get_metrics {"pod":"a"} => 5`),
			want:  [][]int{{0, 2}}, conf: 0.45},
		{name: "a re-check after a state change is a weaker finding",
			trace: build(`call shell {"cmd":"cat cfg"} => v1`, `call shell {"cmd":"kubectl apply -f fix.yaml"} => ok`, `call shell {"cmd":"cat cfg"} => v1`),
			want:  [][]int{{0, 4}}, conf: 0.36},
		{name: "plan updates are left to repeated-plan-update",
			trace: build(`call update_plan {"plan":[]} => Plan updated`, `call update_plan {"plan":[]} => Plan updated`)},
		{name: "calls without results are not compared",
			trace: build(`pending shell {"cmd":"ls"}`, `pending shell {"cmd":"ls"}`)},
	})
}
