package detect

import "testing"

func TestMissingAnswer(t *testing.T) {
	runCases(t, MissingAnswer, []detCase{
		{name: "written and valid", trace: build(zeroTask, `user go`, readAlerts, writeAnswer, validate, `final done`)},
		{name: "no output required", trace: build(`task Say hello.`, `user go`, `final hello`)},
		{name: "never written", trace: build(zeroTask, `instr Write your diagnosis to: /work/run/agent_output.json`, `user go`, readAlerts, `final The cause is flagd-config.`),
			want: [][]int{{0, 4}}, quote: "Write your diagnosis to: /work/run/agent_output.json", conf: 0.9},
		{name: "never written, requirement only in Trace.Task", trace: build(zeroTask, `user go`, readAlerts, `final The cause is flagd-config.`),
			want: [][]int{{3}}, quote: "", conf: 0.9},
		{name: "every write failed", trace: build(zeroTask, `user go`, `fail shell {"command":["bash","-lc","echo '{}' > agent_output.json"]} => sandbox: denied`, `final done`),
			want: [][]int{{1}}, quote: "agent_output.json", conf: 0.85},
		{name: "written but invalid JSON", trace: build(zeroTask, `user go`, `call shell {"command":["bash","-lc","cat > agent_output.json <<'EOF'\n{\"entities\": [\nEOF"]} => `, `final done`),
			want: [][]int{{1}}, conf: 0.85},
		{name: "an answer with no entities", trace: build(zeroTask, `user go`, `call shell {"command":["bash","-lc","echo '{\"entities\": [], \"propagations\": []}' > agent_output.json"]} => `),
			want: [][]int{{1}}, conf: 0.7},
		{name: "an entity without a name", trace: build(zeroTask, `user go`, `call shell {"command":["bash","-lc","echo '{\"entities\": [{\"reasoning\": \"x\"}]}' > agent_output.json"]} => `),
			want: [][]int{{1}}, conf: 0.8},
		{name: "no entity marked as a cause or not", trace: build(zeroTask, `user go`, `call shell {"command":["bash","-lc","echo '{\"entities\": [{\"name\": \"ns/Kind/a\"}]}' > agent_output.json"]} => `),
			want: [][]int{{1}}, conf: 0.75},
		{name: "an unrecognised write read back with jq counts", trace: build(zeroTask, `user go`, `call shell {"command":["python3","-c","open('agent_output.json','w').write(d)"]} => `, validate)},
		{name: "the run directory's copy decides", trace: build(zeroTask, `diag {"entities": []}`, `user go`, writeAnswer),
			want: [][]int{{1}}, conf: 0.7},
		{name: "the model never answered", trace: build(zeroTask, `user go`)},
		{name: "the run stopped on the model's silence mid-investigation", trace: build(zeroTask, `user go`, readAlerts, `silence`)},
		{name: "the agent stopped by speaking, then its turn came back empty", trace: build(zeroTask, `user go`, readAlerts, `say I will write it now.`, `nudge I don't see agent_output.json file.`, `silence`),
			want: [][]int{{3}}, conf: 0.9},
	})
}
