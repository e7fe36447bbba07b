package detect

import "testing"

func TestRepeatedPlanUpdate(t *testing.T) {
	const (
		a = `call update_plan {"plan":[{"step":"Read alerts","status":"in_progress"},{"step":"Write answer","status":"pending"}]} => Plan updated`
		b = `call update_plan {"explanation":"still reading","plan":[{"step":"Read alerts","status":"in_progress"},{"step":"Write answer","status":"pending"}]} => Plan updated`
		c = `call update_plan {"plan":[{"step":"Read alerts","status":"completed"},{"step":"Write answer","status":"in_progress"}]} => Plan updated`
		w = `call shell {"cmd":"cat alerts"} => x`
	)
	runCases(t, RepeatedPlanUpdate, []detCase{
		{name: "the plan advances", trace: build(a, w, c)},
		{name: "restated with nothing done", trace: build(a, b), want: [][]int{{0, 2}}, quote: "Read alerts", conf: 0.7},
		{name: "two identical plans with work between is progress", trace: build(a, w, b)},
		{name: "three identical plans with work between", trace: build(a, w, b, w, a, c), want: [][]int{{0, 4, 8}}, conf: 0.6},
		{name: "TodoWrite plans are read too",
			trace: build(`call TodoWrite {"todos":[{"content":"fix bug","status":"pending"}]} => ok`, `call TodoWrite {"todos":[{"content":"fix bug","status":"pending"}]} => ok`),
			want:  [][]int{{0, 2}}},
		{name: "empty plans are not compared", trace: build(`call update_plan {"plan":[]} => ok`, `call update_plan {"plan":[]} => ok`)},
	})
}
