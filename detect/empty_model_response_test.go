package detect

import "testing"

func TestEmptyModelResponse(t *testing.T) {
	const n = `nudge I don't see agent_output.json file.`
	runCases(t, EmptyModelResponse, []detCase{
		{name: "the model answers", trace: build(`user go`, `say ok`, n, `call shell {} => x`)},
		{name: "never answered, re-prompted", trace: build(`instr be good`, `user Begin investigation`, n, n, `error turn_aborted turn aborted: interrupted`),
			want: [][]int{{1, 2, 3}}, quote: "I don't see agent_output.json file.", conf: 0.95},
		{name: "never answered the only prompt", trace: build(`user Begin investigation`),
			want: [][]int{{0}}, quote: "Begin investigation", conf: 0.8},
		{name: "silent turns between prompts of a run that acted", trace: build(`user go`, `say ok`, n, n, `say hi`, n, `system compacted`, n),
			want: [][]int{{3, 7}}, conf: 0.6},
		{name: "a retry nudge right after a tool result", trace: build(`user go`, `call shell {} => x`, n, `say ok`, `call shell {} => y`, `user hm`),
			want: [][]int{{3}}, conf: 0.6},
		{name: "nothing to answer", trace: build(`system started`)},
		{name: "the run ends on a turn the model never answered", trace: build(`user go`, `call shell {} => x`, `silence`),
			want: [][]int{{3}}, quote: "the model was given a turn and produced nothing", conf: 0.8},
		{name: "an empty turn the agent answered after is no end", trace: build(`user go`, `silence`, `say ok`)},
		{name: "named agents in the user seat are not prompts", trace: build(`agent CPO@assistant let us build it`, `agent CEO@user agreed`, `agent CEO@user and more`)},
		{name: "a chat agent's empty turns", trace: build(`agent Planner@ plan this`, `agent Coder@ here is the code`, `agent Tester@`, `agent Tester@  `, `agent Tester@ all good`),
			want: [][]int{{2, 3}}, conf: 0.6},
	})
}
