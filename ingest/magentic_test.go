package ingest

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/shared"
)

const magenticLogSample = `[
  {"content": "What character fixes the code?", "role": "human"},
  {"content": "Initial plan:\nWe have assembled a team.", "role": "Orchestrator (thought)"},
  {"content": "Please search for Unlambda operators.", "role": "Orchestrator (-> WebSurfer)"},
  {"content": "I typed 'Unlambda operators' into the search box.", "role": "WebSurfer"},
  {"content": "The character is k.", "role": "Assistant"},
  {"content": "No agent selected.\nFINAL ANSWER: k\nSCENARIO.PY COMPLETE !#!#", "role": "Orchestrator (termination condition)"}
]`

func TestMagenticOneSniff(t *testing.T) {
	tests := []struct {
		name, head string
		want       bool
	}{
		{"log", magenticLogSample, true},
		{"cut in the first message", `[{"content": "` + strings.Repeat("q", 300) + `", "role": "human"}, {"content": "Plan", "role": "Orchestrator (thought)"}, {"content": "x`, true},
		{"a plain chat", `[{"role": "user", "content": "hi"}]`, false},
		{"orchestrator only in the text", `[{"role": "user", "content": "the \"role\": \"Orchestrator (x)\" key"}]`, false},
		{"a Who&When record", `{"history": [{"content": "x", "role": "Orchestrator (thought)"}]}`, false},
	}
	for _, tt := range tests {
		if got := (MagenticOne{}).Sniff([]byte(tt.head)); got != tt.want {
			t.Errorf("%s: Sniff = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestMagenticOneLog(t *testing.T) {
	traces, issues := decodeWith(t, MagenticOne{}, "m1.json", strings.NewReader(magenticLogSample))
	if len(traces) != 1 || len(issues) != 0 {
		t.Fatalf("traces %d, issues %v", len(traces), issues)
	}
	tr := traces[0]
	want := `0 message role=user "What character fixes the code?"
1 reasoning role=assistant agent=Orchestrator type=thought "Initial plan:\nWe have assembled a team."
2 message role=assistant agent=Orchestrator type=-> WebSurfer "Please search for Unlambda operators."
3 message role=assistant agent=WebSurfer "I typed 'Unlambda operators' into the se…"
4 message role=assistant agent=Assistant "The character is k."
5 final role=assistant agent=Orchestrator type=termination condition "No agent selected.\nFINAL ANSWER: k\nSCENA…"
`
	if got := stepLines(tr); got != want {
		t.Errorf("steps:\n%s\nwant\n%s", got, want)
	}
	if tr.Task != "What character fixes the code?" || tr.System != "magentic-one" || !strings.HasPrefix(tr.ID, "magentic-one:") {
		t.Errorf("id %q task %q system %q", tr.ID, tr.Task, tr.System)
	}
	// The id is the content's: the same log elsewhere, or written in lines, is the same run.
	lines := strings.Join(strings.Split(strings.Trim(magenticLogSample, "[]\n"), ",\n"), "\n")
	again, _ := decodeWith(t, MagenticOne{}, "elsewhere/m1.jsonl", strings.NewReader(lines))
	if len(again) != 1 || again[0].ID != tr.ID {
		t.Errorf("ids %q and %v differ", tr.ID, again)
	}
}

func TestMagenticOneBadMessages(t *testing.T) {
	content := "[\n{\"content\": \"hi\", \"role\": \"human\"},\n{\"content\": \"x\", \"role\": {}},\n[1],\n{\"content\": \"ok\", \"role\": \"Coder\"}\n]"
	traces, issues := decodeWith(t, MagenticOne{}, "m.json", strings.NewReader(content))
	want := []string{
		`m.json:3: record 1 (line 3): field "role" should be text, found an object; message skipped`,
		`m.json:4: record 2 (line 4): a record should be an object, found an array; record skipped`,
	}
	if got := issueTexts(issues, Error); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(traces) != 1 || len(traces[0].Steps) != 2 {
		t.Errorf("traces %v", traces)
	}
	if traces, issues := decodeWith(t, MagenticOne{}, "e.json", strings.NewReader("[3]")); len(traces) != 0 || len(issueTexts(issues, Notice)) != 1 {
		t.Errorf("a log of no message: traces %v, issues %v", traces, issues)
	}
}

func TestMagenticOneSample(t *testing.T) {
	path := shared.Path(t, "samples/agentrx/magentic-one-trajectories-invent_new_info.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := Detect(data[:min(len(data), SniffSize)]); !ok || f.Name() != "magentic-one" {
		t.Errorf("detected as %v", f)
	}
	traces, issues := decodeWith(t, MagenticOne{}, path, bytes.NewReader(data))
	if len(traces) != 1 || len(issues) != 0 {
		t.Fatalf("traces %d, issues %v", len(traces), issues)
	}
	tr := traces[0]
	if len(tr.Steps) != 16 || tr.CountKind("reasoning") != 8 || tr.CountKind("final") != 1 || !strings.HasPrefix(tr.Task, "In Unlambda") {
		t.Errorf("%d steps (%d reasoning, %d final), task %q", len(tr.Steps), tr.CountKind("reasoning"), tr.CountKind("final"), tr.Task)
	}
	agents := map[string]bool{}
	for _, s := range tr.Steps {
		agents[s.Agent] = true
	}
	if !agents["Orchestrator"] || !agents["WebSurfer"] || !agents["Assistant"] {
		t.Errorf("agents %v", agents)
	}
}

func FuzzMagenticOne(f *testing.F) {
	f.Add([]byte(magenticLogSample))
	f.Add([]byte(`[{"content": ["a", "b"], "role": "Orchestrator (thought)"}, {"content": {"x": NaN}, "role": null}]`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFormat(t, MagenticOne{}, data) })
}
