package detect

import "testing"

func TestEarlyAnswer(t *testing.T) {
	runCases(t, EarlyAnswer, []detCase{
		{name: "evidence first", trace: build(zeroTask, `user go`, readAlerts, readSpecs, writeAnswer, validate, `final done`)},
		{name: "an investigation answered after reading the alerts only", trace: build(zeroTask, `user go`, readAlerts, writeAnswer, validate),
			want: [][]int{{3}}, conf: 0.6},
		{name: "one read is enough for a task without data of its own",
			trace: build(`task Write your remediation plan to: plan.json`, `instr Your incident data is located in these directories (READ-ONLY):\n- /data/snap/7`,
				`user go`, `call shell {"cmd":"cat agent_output.json"} => {}`, `call shell {"cmd":"cat > plan.json <<EOF\n{}\nEOF"} => `)},
		{name: "an announcement and nothing else", trace: build(zeroTask, `user go`, `final First I will list the data directory.`),
			want: [][]int{{1}}, quote: "First I will list the data directory.", conf: 0.85},
		{name: "answer written after only a listing", trace: build(zeroTask, `user go`, `call shell {"command":["ls","/data/snap/7"]} => alerts`, writeAnswer, validate),
			want: [][]int{{3}}, quote: "agent_output.json"},
		{name: "a conversation-only run is not judged", trace: build(`user what is 2+2?`, `final 4`)},
		{name: "failed reads are not evidence", trace: build(`user go`, `fail shell {"cmd":"cat x"} => no such file`, `final The root cause is x.`),
			want: [][]int{{3}}},
		{name: "no answer at all is left to missing-answer", trace: build(zeroTask, `user go`, `call shell {"cmd":"ls"} => a`)},
	})
}
