package judge

import (
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/judge/judgetest"
)

func TestParseAnswerExtraction(t *testing.T) {
	valid := judgetest.Answer(nil)
	tests := []struct {
		name, content, wantErr string
	}{
		{"bare", valid, ""},
		{"fenced", "Here is my annotation:\n```json\n" + valid + "\n```\nDone.", ""},
		{"prose around", "I looked at {every} step. " + valid + " That is all {really}.", ""},
		{"reasoning first", "<think>the plan is {a, b}</think>\n" + valid, ""},
		{"empty", "  ", "the reply is empty"},
		{"no object", "I cannot judge this trace.", "holds no JSON object"},
		{"cut off", valid[:len(valid)/2], "never closed"},
		{"malformed", `{"modes": {"FM-1.1": {"present": fals}}, "summary": "x"}`, "malformed: invalid character"},
		{"no modes", `{"summary": "x", "task_success": "failure"}`, `no "modes"`},
		{"modes not an object", `{"modes": 3, "summary": "x"}`, `"modes" must be an object`},
		{"wrong type", `{"modes": {}, "summary": 5}`, `field "summary" holds a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := parseAnswer(tt.content)
			if tt.wantErr == "" {
				if err != nil || len(a.Modes) != 14 {
					t.Fatalf("err %v, %d modes", err, len(a.Modes))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseAnswerModesAsList(t *testing.T) {
	a, err := parseAnswer(`{"modes": [{"mode": "FM-1.1", "present": false}, {"mode": "1.2", "present": true}], "summary": "s", "task_success": "unknown"}`)
	if err != nil || len(a.Modes) != 2 || len(a.Modes["1.2"].Present) == 0 {
		t.Fatalf("%v %+v", err, a)
	}
}

func TestValidate(t *testing.T) {
	tr := handTrace()
	v := newView(render(tr, DefaultRender, "detector"), []int{0, 1}, []int{2, 3, 4}, 0, 2)
	good := judgetest.Mode{Present: true, Confidence: 0.7, Steps: []string{"S2", "S4"}, Quote: `"kubectl","get","pods"`, Explanation: "Listed twice."}
	with := func(code string, m judgetest.Mode) string {
		return judgetest.Answer(map[string]judgetest.Mode{code: m})
	}
	tests := []struct {
		name    string
		content string
		want    []string // problems, in full or in part; none means accepted
	}{
		{"valid", with("FM-1.3", good), nil},
		{"quote across whitespace", with("FM-1.3", judgetest.Mode{Present: true, Confidence: 0.7, Steps: []string{"S0"}, Quote: "Find  the\nroot cause", Explanation: "x"}), nil},
		{"missing mode", strings.Replace(judgetest.Answer(nil), `"FM-2.6"`, `"FM-9.9"`, 1), []string{`"FM-9.9" is not a mode`, "FM-2.6 is missing"}},
		{"step does not exist", with("FM-1.3", judgetest.Mode{Present: true, Confidence: 0.7, Steps: []string{"S99"}, Quote: "whatever it was", Explanation: "x"}), []string{"FM-1.3: step S99 does not exist (the trace has S0-S6)"}},
		{"step not shown", with("FM-1.3", judgetest.Mode{Present: true, Confidence: 0.7, Steps: []string{"S6"}, Quote: "The root cause is", Explanation: "x"}), []string{"FM-1.3: step S6 is not among the steps shown (S0-S1 and S2-S4)"}},
		{"step id malformed", with("FM-1.3", judgetest.Mode{Present: true, Confidence: 0.7, Steps: []string{"step two"}, Quote: "kubectl get", Explanation: "x"}), []string{`step id "step two" is not of the form "S12"`}},
		{"quote not there", with("FM-3.3", judgetest.Mode{Present: true, Confidence: 0.7, Steps: []string{"S3"}, Quote: "all checks passed", Explanation: "x"}), []string{`FM-3.3: the quote "all checks passed" does not occur in S3`}},
		{"quote too short", with("FM-1.3", judgetest.Mode{Present: true, Confidence: 0.7, Steps: []string{"S2"}, Quote: "get", Explanation: "x"}), []string{"too short"}},
		{"no steps", with("FM-1.3", judgetest.Mode{Present: true, Confidence: 0.7, Steps: []string{}, Quote: "kubectl get", Explanation: "x"}), []string{"FM-1.3 is marked present but cites no step"}},
		{"no quote", with("FM-1.3", judgetest.Mode{Present: true, Confidence: 0.7, Steps: []string{"S2"}, Explanation: "x"}), []string{"FM-1.3 is marked present but gives no quote"}},
		{"confidence out of range", with("FM-1.3", judgetest.Mode{Present: false, Confidence: 85, Steps: []string{}}), []string{`FM-1.3: "confidence" must be from 0 to 1, not 85`}},
		{"present missing", strings.Replace(judgetest.Answer(nil), `"present":false`, `"present":null`, 1), []string{`"present" is missing`}},
		{"bad task_success", strings.Replace(judgetest.Answer(nil), `"task_success":"failure"`, `"task_success":"partly"`, 1), []string{`"task_success" must be "success", "failure" or "unknown", not "partly"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := parseAnswer(tt.content)
			if err != nil {
				t.Fatal(err)
			}
			a, problems := validate(raw, tr, v)
			if len(tt.want) == 0 {
				if len(problems) > 0 || len(a.Modes) != 14 {
					t.Fatalf("problems: %v", problems)
				}
				return
			}
			if a != nil {
				t.Fatalf("accepted an answer with problems %v", tt.want)
			}
			all := strings.Join(problems, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("problems lack %q:\n%s", w, all)
				}
			}
		})
	}
}

// An unparsed or missing mode is never read as absent: MAST's judge turned
// whatever its regular expressions missed into "no".
func TestValidateNeverDefaultsToAbsent(t *testing.T) {
	tr := handTrace()
	v := newView(render(tr, DefaultRender, "detector"), nil, seq(0, len(tr.Steps)), 0, 1)
	content := `{"modes": {"FM-1.1": {"present": "maybe", "confidence": 0.5, "steps": [], "quote": "", "explanation": ""}}, "summary": "s", "task_success": "unknown"}`
	raw, err := parseAnswer(content)
	if err != nil {
		t.Fatal(err)
	}
	a, problems := validate(raw, tr, v)
	if a != nil || len(problems) != 14 {
		t.Fatalf("answer %v, %d problems: %v", a, len(problems), problems)
	}
	if !strings.Contains(problems[0], `FM-1.1: "present" must be true or false, not "maybe"`) {
		t.Errorf("first problem: %s", problems[0])
	}
}
