package detect

import "testing"

func TestProseFinal(t *testing.T) {
	const only = `task Diagnose the incident. Write your diagnosis to: /w/agent_output.json\nNEVER output anything other than the final JSON at the end.`
	const json = `{"entities":[{"name":"ns/ConfigMap/flags","contributing_factor":true}]}`
	runCases(t, ProseFinal, []detCase{
		{name: "a summary after the answer was written", trace: build(only, `user go`, writeAnswer, `final The investigation is complete. The flag was turned on.`),
			want: [][]int{{3}}, quote: "The investigation is complete. The flag was turned on.", conf: 0.7},
		{name: "the answer wrapped in commentary", trace: build(only, `user go`, "final thought: I found the cause below.\\n```json\\n"+json+"\\n```"),
			want: [][]int{{1}}, quote: "thought: I found the cause below."},
		{name: "the JSON alone", trace: build(only, `user go`, `final `+json)},
		{name: "the JSON in a fence, a word around it", trace: build(only, `user go`, "final Answer:\\n```json\\n"+json+"\\n```")},
		{name: "no answer at all: a plan, then nothing", trace: build(only, `user go`, `final First I will list the files and read the alerts.`)},
		{name: "the rule not stated", trace: build(`task Diagnose the incident.`, `user go`, writeAnswer, `final The investigation is complete. The flag was turned on.`)},
		{name: "the run ends on a tool call", trace: build(only, `user go`, writeAnswer)},
	})
}
