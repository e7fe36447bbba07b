package ingest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/shared"
	"github.com/faultline/faultline/trace"
)

// whoWhenAG2 is an algorithm-generated record: an AG2 group chat with its
// agents' system prompts, the code executor's reports, and the decisive
// error at history step 1.
const whoWhenAG2 = `{
  "is_correct": false,
  "question": "How many even numbers are in the list?",
  "question_ID": "q-1",
  "level": "2",
  "ground_truth": "8",
  "history": [
    {"content": "You are given a task. Count them with pandas.", "role": "assistant", "name": "Excel_Expert"},
    {"content": "exitcode: 1 (execution failed)\nCode output: KeyError: 'Street'", "role": "user", "name": "Computer_terminal"},
    {"content": "exitcode: 0 (execution succeeded)\nCode output: 4", "role": "user", "name": "Computer_terminal"},
    {"content": "The answer is 4. TERMINATE", "role": "user", "name": "Verification_Expert"}
  ],
  "mistake_agent": "Excel_Expert",
  "mistake_step": "0",
  "mistake_reason": "The code ignores malformed addresses.",
  "system_prompt": {"Excel_Expert": "## Your role\nExcel_Expert", "Verification_Expert": "## Your role\nVerifier"}
}`

// whoWhenMagentic is a hand-crafted record: a Magentic-One log, the
// outcome spelt is_corrected, the agent written in another case than the
// log's.
const whoWhenMagentic = `{"history": [
  {"content": "Where is the nearest dojo?", "role": "human"},
  {"content": "Initial plan: search the web.", "role": "Orchestrator (thought)"},
  {"content": "Search for dojos near Wall Street.", "role": "Orchestrator (-> WebSurfer)"},
  {"content": "I clicked an unrelated site.", "role": "WebSurfer"},
  {"content": "No agent selected.\nFINAL ANSWER: none\nSCENARIO.PY COMPLETE !#!#", "role": "Orchestrator (termination condition)"}
 ],
 "question": "Where is the nearest dojo?", "ground_truth": "Renzo Gracie", "is_corrected": false, "question_ID": "q-2",
 "mistake_agent": "Websurfer", "mistake_step": "3", "mistake_reason": "WebSurfer clicks an irrelevant site."}`

func TestWhoWhenSniff(t *testing.T) {
	tests := []struct {
		name, head string
		want       bool
	}{
		{"algorithm-generated", whoWhenAG2, true},
		{"hand-crafted", whoWhenMagentic, true},
		{"history cut in the head", `{"history": [{"content": "Where", "role": "human"}, {"content": "` + strings.Repeat("x", 500), true},
		{"array of records", "[" + whoWhenMagentic + "]", true},
		{"labels only", `{"history": [], "mistake_step": "1"}`, true},
		{"history of something else", `{"history": ["a", "b"], "x": 1}`, false},
		{"a chat", `{"messages": [{"role": "user", "content": "x"}]}`, false},
		{"no history", `{"mistake_agent": "A", "mistake_step": "1"}`, false},
		{"not JSON", `history mistake_agent`, false},
	}
	for _, tt := range tests {
		if got := (WhoWhen{}).Sniff([]byte(tt.head)); got != tt.want {
			t.Errorf("%s: Sniff = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestWhoWhenAlgorithmGenerated(t *testing.T) {
	traces, issues := decodeWith(t, WhoWhen{}, "ag.json", strings.NewReader(whoWhenAG2))
	if len(traces) != 1 || len(issues) != 0 {
		t.Fatalf("traces %d, issues %v", len(traces), issues)
	}
	tr := traces[0]
	// The system prompts come first, so the label's history step 0 is step 2.
	want := `0 system role=system agent=Excel_Expert type=instructions "## Your role\nExcel_Expert"
1 system role=system agent=Verification_Expert type=instructions "## Your role\nVerifier"
2 message agent=Excel_Expert "You are given a task. Count them with pa…"
3 tool_result role=tool agent=Computer_terminal type=code_execution exit=1 error "exitcode: 1 (execution failed)\nCode outp…"
4 tool_result role=tool agent=Computer_terminal type=code_execution exit=0 "exitcode: 0 (execution succeeded)\nCode o…"
5 message agent=Verification_Expert "The answer is 4. TERMINATE"
`
	if got := stepLines(tr); got != want {
		t.Errorf("steps:\n%s\nwant\n%s", got, want)
	}
	if tr.ID != "whowhen:algorithm-generated:q-1" || tr.System != "ag2" || tr.Task != "How many even numbers are in the list?" || tr.Source != "ag.json#0" {
		t.Errorf("id/system/task/source %q %q %q %q", tr.ID, tr.System, tr.Task, tr.Source)
	}
	for k, v := range map[string]string{"subset": "algorithm-generated", "level": "2", "ground_truth": "8", "question_ID": "q-1", MetaMistakeAgent: "Excel_Expert", "mistake_step": "0"} {
		if tr.Meta[k] != v {
			t.Errorf("meta %s = %q, want %q", k, tr.Meta[k], v)
		}
	}
	if len(tr.Outcomes) != 1 || tr.Outcomes[0].Source != "format" || *tr.Outcomes[0].Success || tr.Outcomes[0].Detail != "ground truth: 8" {
		t.Errorf("outcomes %+v", tr.Outcomes)
	}
	wantLabel := trace.Finding{Source: WhoWhenSource, Verdict: trace.Present, RawLabel: DecisiveError, Steps: []int{2},
		Explanation: "Excel_Expert: The code ignores malformed addresses."}
	if len(tr.Findings) != 1 || !sameFinding(tr.Findings[0], wantLabel) {
		t.Errorf("findings %+v, want %+v", tr.Findings, wantLabel)
	}
}

func sameFinding(a, b trace.Finding) bool {
	return a.Mode == b.Mode && a.Source == b.Source && a.Verdict == b.Verdict && a.RawLabel == b.RawLabel &&
		a.Explanation == b.Explanation && len(a.Steps) == len(b.Steps) && (len(a.Steps) == 0 || a.Steps[0] == b.Steps[0])
}

func TestWhoWhenHandCrafted(t *testing.T) {
	traces, issues := decodeWith(t, WhoWhen{}, "hc.json", strings.NewReader(whoWhenMagentic))
	if len(traces) != 1 || len(issues) != 0 {
		t.Fatalf("traces %d, issues %v", len(traces), issues)
	}
	tr := traces[0]
	want := `0 message role=user "Where is the nearest dojo?"
1 reasoning role=assistant agent=Orchestrator type=thought "Initial plan: search the web."
2 message role=assistant agent=Orchestrator type=-> WebSurfer "Search for dojos near Wall Street."
3 message role=assistant agent=WebSurfer "I clicked an unrelated site."
4 final role=assistant agent=Orchestrator type=termination condition "No agent selected.\nFINAL ANSWER: none\nSC…"
`
	if got := stepLines(tr); got != want {
		t.Errorf("steps:\n%s\nwant\n%s", got, want)
	}
	if tr.ID != "whowhen:hand-crafted:q-2" || tr.System != "magentic-one" || tr.Meta["subset"] != "hand-crafted" {
		t.Errorf("id %q system %q meta %v", tr.ID, tr.System, tr.Meta)
	}
	if len(tr.Outcomes) != 1 || *tr.Outcomes[0].Success {
		t.Errorf("is_corrected should give the outcome: %+v", tr.Outcomes)
	}
	if len(tr.Findings) != 1 || tr.Findings[0].Steps[0] != 3 || tr.Meta[MetaMistakeAgent] != "Websurfer" {
		t.Errorf("label %+v, meta %v", tr.Findings, tr.Meta)
	}
}

func TestWhoWhenBadRecords(t *testing.T) {
	content := `[
{"question_ID": "a", "history": [{"content": "hi", "role": "human"}, 42, {"content": "x", "role": "WebSurfer"}],
 "mistake_agent": "WebSurfer", "mistake_step": "2", "is_correct": "maybe"},
{"question_ID": "b", "history": [{"content": "hi", "role": "human"}], "mistake_agent": "Coder",
 "mistake_step": "9"},
{"question_ID": "c", "history": [{"content": "hi", "role": "human"}], "mistake_agent": "Coder", "mistake_step": "zero"},
{"question_ID": "d", "history": []},
{"question_ID": "e", "history": "none"},
{"question_ID": {"f": 1}, "history": [{"content": "hi", "role": "human"}], "mistake_step": 0, "mistake_agent": "X"},
"not a record",
{"question_ID": "a", "history": [{"content": "again", "role": "human"}]}
]`
	traces, issues := decodeWith(t, WhoWhen{}, "bad.json", strings.NewReader(content))
	var ids []string
	for _, tr := range traces {
		ids = append(ids, tr.ID)
	}
	if got := strings.Join(ids, " "); got != "whowhen:hand-crafted:a whowhen:hand-crafted:b whowhen:hand-crafted:c whowhen:hand-crafted:b02c2c0439f9 whowhen:hand-crafted:a#7" {
		t.Errorf("ids %s", got)
	}
	// An unreadable history entry keeps its place, so the label still
	// points at the WebSurfer's step.
	if tr := traces[0]; len(tr.Steps) != 3 || tr.Steps[1].Type != "unreadable" || tr.Findings[0].Steps[0] != 2 || len(tr.Outcomes) != 0 {
		t.Errorf("first trace: %s findings %+v outcomes %+v", stepLines(tr), tr.Findings, tr.Outcomes)
	}
	// A label whose step is not in the history keeps the agent alone.
	if f := traces[1].Findings; len(f) != 1 || len(f[0].Steps) != 0 || traces[1].Meta[MetaMistakeAgent] != "Coder" {
		t.Errorf("second trace's label %+v", f)
	}
	want := []string{
		`bad.json:2: record 0 (line 2): history 1 should be a message {content, role, name}, found 42; kept as a system step`,
		`bad.json:3: record 0 (line 2): field "is_correct" should be true or false, found "maybe"; no outcome`,
		`bad.json:5: record 1 (line 4): mistake_step "9" is not a step of the history (0 to 0); the label keeps the agent alone`,
		`bad.json:6: record 2 (line 6): mistake_step "zero" is not a step of the history (0 to 0); the label keeps the agent alone`,
		`bad.json:7: record 3 (line 7): the history is empty; record skipped`,
		`bad.json:8: record 4 (line 8): field "history" should be an array, found a string; record skipped`,
		`bad.json:9: record 5 (line 9): field "question_ID" should be text, found an object; ignored`,
		`bad.json:10: record 6 (line 10): a record should be an object, found a string; record skipped`,
	}
	if got := issueTexts(issues, Error); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	notices := issueTexts(issues, Notice)
	if len(notices) != 1 || !strings.Contains(notices[0], `mistake_step 0 is spoken by "user", mistake_agent is "X"`) {
		t.Errorf("notices %q", notices)
	}
}

// whoWhenSamples are the real records: steps (history and system prompts),
// the label's step and agent.
var whoWhenSamples = []struct {
	file  string
	steps int
	label int
	agent string
}{
	{"algorithm-generated-1.json", 9, 3, "Excel_Expert"},
	{"algorithm-generated-2.json", 10, 5, "Verification_Expert"},
	{"algorithm-generated-3.json", 11, 7, "Verification_Expert"},
	{"hand-crafted-1.json", 29, 12, "WebSurfer"},
	{"hand-crafted-10.json", 44, 9, "Orchestrator"},
	{"hand-crafted-11.json", 130, 24, "WebSurfer"},
}

func TestWhoWhenSamples(t *testing.T) {
	dir := shared.Path(t, "samples/whowhen")
	for _, s := range whoWhenSamples {
		path := filepath.Join(dir, s.file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := Detect(data[:min(len(data), SniffSize)]); !ok || f.Name() != "whowhen" {
			t.Errorf("%s: detected as %v", s.file, f)
		}
		traces, issues := decodeWith(t, WhoWhen{}, path, bytes.NewReader(data))
		if len(issues) != 0 || len(traces) != 1 {
			t.Errorf("%s: %d traces, issues %v", s.file, len(traces), issues)
			continue
		}
		tr := traces[0]
		if len(tr.Steps) != s.steps || len(tr.Findings) != 1 || tr.Findings[0].Steps[0] != s.label {
			t.Errorf("%s: %d steps, findings %+v; want %d steps, label at %d", s.file, len(tr.Steps), tr.Findings, s.steps, s.label)
			continue
		}
		if got := tr.Steps[s.label].Agent; got != s.agent {
			t.Errorf("%s: the labelled step is %q's, want %q's", s.file, got, s.agent)
		}
		if o := trace.PrimaryOutcome(tr.Outcomes); o == nil || *o.Success || tr.Task == "" || tr.Meta["question_ID"] == "" {
			t.Errorf("%s: outcome %+v, task %q", s.file, o, tr.Task)
		}
		t.Logf("%s: %s, %d steps, label at step %d (%s)", s.file, tr.ID, len(tr.Steps), s.label, s.agent)
	}
}

func FuzzWhoWhen(f *testing.F) {
	f.Add([]byte(whoWhenAG2))
	f.Add([]byte(whoWhenMagentic))
	f.Add([]byte(`[{"history": [{"content": ["a", "b"], "role": "human"}, {"content": null, "name": "A"}], "mistake_step": "1", "mistake_agent": "A", "system_prompt": {"A": NaN}}]`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFormat(t, WhoWhen{}, data) })
}
