package ingest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/shared"
	"github.com/faultline/faultline/trace"
)

// decodeString runs a format over in-memory content.
func decodeString(t *testing.T, f Format, content string) ([]*trace.Trace, []Issue) {
	t.Helper()
	return decodeWith(t, f, "mem.jsonl", strings.NewReader(content))
}

// decodeWith decodes r as the named file, collecting traces and issues and
// checking every trace is valid.
func decodeWith(t testing.TB, f Format, path string, r io.Reader) ([]*trace.Trace, []Issue) {
	t.Helper()
	var issues []Issue
	var traces []*trace.Trace
	in := &Input{Path: path, R: r, report: func(i Issue) { issues = append(issues, i) }}
	err := f.Decode(context.Background(), in, func(tr *trace.Trace) error {
		traces = append(traces, tr)
		return nil
	})
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	for _, tr := range traces {
		if p := tr.Validate(); len(p) > 0 {
			t.Errorf("trace %s invalid: %v", tr.ID, p)
		}
	}
	return traces, issues
}

const codexSample = `{"timestamp":"2026-01-15T16:08:40.851Z","type":"session_meta","payload":{"id":"s1","cwd":"/w","originator":"codex_exec","cli_version":"0.80.0","instructions":"Find the root cause."}}
{"timestamp":"2026-01-15T16:08:40.852Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n<cwd>/w</cwd>\n</environment_context>"}]}}
{"timestamp":"2026-01-15T16:08:40.853Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Begin investigation"}]}}
{"timestamp":"2026-01-15T16:08:40.853Z","type":"event_msg","payload":{"type":"user_message","message":"Begin investigation","images":[]}}
{"timestamp":"2026-01-15T16:08:41.000Z","type":"turn_context","payload":{"cwd":"/w","model":"model-a"}}
{"timestamp":"2026-01-15T16:08:41.100Z","type":"event_msg","payload":{"type":"agent_reasoning","text":"Look at alerts first."}}
{"timestamp":"2026-01-15T16:08:41.100Z","type":"response_item","payload":{"type":"reasoning","summary":[{"type":"summary_text","text":"Look at alerts first."}],"encrypted_content":"xx"}}
{"timestamp":"2026-01-15T16:08:42.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\",\"alerts\"]}","call_id":"c1"}}
{"timestamp":"2026-01-15T16:08:42.100Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"a.json\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.1}}"}}
{"timestamp":"2026-01-15T16:08:43.000Z","type":"response_item","payload":{"type":"function_call","name":"mcp__x__alert_summary","arguments":"{}","call_id":"c2"}}
{"timestamp":"2026-01-15T16:08:43.100Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":"[{\"type\":\"text\",\"text\":\"3 alerts firing\"}]"}}
{"timestamp":"2026-01-15T16:08:44.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"false\"]}","call_id":"c3"}}
{"timestamp":"2026-01-15T16:08:44.100Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c3","output":"{\"output\":\"\",\"metadata\":{\"exit_code\":1,\"duration_seconds\":0.0}}"}}
{"timestamp":"2026-01-15T16:08:45.000Z","type":"response_item","payload":{"type":"function_call","name":"apply_patch","arguments":"{\"input\":\"bad","call_id":"c4"}}
{"timestamp":"2026-01-15T16:08:45.100Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c4","output":"failed to parse function arguments: EOF while parsing a string"}}
{"timestamp":"2026-01-15T16:08:45.200Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":10,"output_tokens":20,"reasoning_output_tokens":5,"total_tokens":125},"last_token_usage":{"input_tokens":50,"output_tokens":7,"reasoning_output_tokens":1,"total_tokens":58}}}}
{"timestamp":"2026-01-15T16:08:46.000Z","type":"event_msg","payload":{"type":"agent_message","message":"The root cause is the cart service."}}
{"timestamp":"2026-01-15T16:08:46.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"The root cause is the cart service."}]}}
{"timestamp":"2026-01-15T16:08:47.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"I don't see agent_output.json file. Please resume the investigation."}]}}
{"timestamp":"2026-01-15T16:08:47.000Z","type":"event_msg","payload":{"type":"user_message","message":"I don't see agent_output.json file. Please resume the investigation."}}
{"timestamp":"2026-01-15T16:08:48.000Z","type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}
{"timestamp":"2026-01-15T16:08:49.000Z","type":"future_event","payload":{"type":"x","data":1}}
{"timestamp":"2026-01-15T16:08:50.000Z","type":"event_msg","payload":{"type":"brand_new_ui_event","x":2}}
`

func TestCodexDecodesEveryEventShape(t *testing.T) {
	traces, issues := decodeString(t, Codex{}, codexSample)
	if len(issues) != 0 {
		t.Fatalf("unexpected issues: %v", issues)
	}
	if len(traces) != 1 {
		t.Fatalf("got %d traces, want 1", len(traces))
	}
	tr := traces[0]
	if tr.ID != "s1" || tr.Model != "model-a" || tr.Task != "Find the root cause." {
		t.Errorf("id/model/task = %q/%q/%q", tr.ID, tr.Model, tr.Task)
	}
	want := []struct {
		kind trace.Kind
		role string
		text string
	}{
		{trace.KindSystem, trace.RoleHarness, "<environment_context>"},
		{trace.KindMessage, "user", "Begin investigation"},
		{trace.KindReasoning, trace.RoleAssistant, "Look at alerts first."},
		{trace.KindToolCall, trace.RoleAssistant, ""},
		{trace.KindToolResult, trace.RoleTool, "a.json\n"},
		{trace.KindToolCall, trace.RoleAssistant, ""},
		{trace.KindToolResult, trace.RoleTool, "3 alerts firing"},
		{trace.KindToolCall, trace.RoleAssistant, ""},
		{trace.KindToolResult, trace.RoleTool, ""},
		{trace.KindToolCall, trace.RoleAssistant, ""},
		{trace.KindToolResult, trace.RoleTool, "failed to parse"},
		// Not the final answer: the harness re-prompted after it.
		{trace.KindMessage, trace.RoleAssistant, "The root cause is the cart service."},
		{trace.KindMessage, trace.RoleHarness, "I don't see agent_output.json"},
		{trace.KindError, trace.RoleHarness, "turn aborted: interrupted"},
		{trace.KindSystem, "", `{"type":"x","data":1}`},
		{trace.KindSystem, "", `"brand_new_ui_event"`},
	}
	if len(tr.Steps) != len(want) {
		for _, s := range tr.Steps {
			t.Logf("%d %s %s %q", s.Index, s.Kind, s.Role, trace.Clip(s.Text, 40))
		}
		t.Fatalf("got %d steps, want %d", len(tr.Steps), len(want))
	}
	for i, w := range want {
		s := tr.Steps[i]
		if s.Kind != w.kind || s.Role != w.role || !strings.Contains(s.Text, w.text) {
			t.Errorf("step %d = %s/%s %q, want %s/%s containing %q", i, s.Kind, s.Role, s.Text, w.kind, w.role, w.text)
		}
	}
	// Pairing, exit codes and error marks.
	if r := tr.Result(3); r == nil || r.Index != 4 || r.ExitCode == nil || *r.ExitCode != 0 || r.Tool != "shell" {
		t.Errorf("shell call not paired with its result: %+v", r)
	}
	if r := tr.Result(7); r == nil || !r.IsError || *r.ExitCode != 1 {
		t.Errorf("failing shell result not marked: %+v", r)
	}
	if r := tr.Result(9); r == nil || !r.IsError {
		t.Errorf("argument parse failure not marked as error: %+v", r)
	}
	if tr.Usage.TotalTokens != 125 || tr.Usage.ReasoningTokens != 5 {
		t.Errorf("usage = %+v", tr.Usage)
	}
	if tr.Meta["harness_retries"] != "1" {
		t.Errorf("harness retries = %q, want 1", tr.Meta["harness_retries"])
	}
}

func TestCodexBadLinesAreReportedAndSkipped(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(codexSample), "\n")
	bad := []string{
		lines[0],
		`{"timestamp":"2026-01-15T16:08:41Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"trunc`,
		"\xff\xfe not utf8 {\"type\":1}",
		`{"timestamp":"2026-01-15T16:08:41Z","payload":{}}`,
		lines[4],
		`{"timestamp":"2026-01-15T16:08:41Z","type":"response_item","payload":{"type":"function_call_output","call_id":"nope","output":"orphan"}}`,
		`{"timestamp":"2026-01-15T16:08:41Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"` + strings.Repeat("long ", 40000) + `"}]}}`,
	}
	traces, issues := decodeString(t, Codex{}, strings.Join(bad, "\n"))
	if len(traces) != 1 {
		t.Fatalf("got %d traces", len(traces))
	}
	var got []string
	for _, i := range issues {
		got = append(got, i.String())
	}
	joined := strings.Join(got, "\n")
	for _, want := range []string{"mem.jsonl:2: not a valid event", "mem.jsonl:3: invalid UTF-8", "mem.jsonl:4: event has no type", "no call before it"} {
		if !strings.Contains(joined, want) {
			t.Errorf("issues lack %q:\n%s", want, joined)
		}
	}
	last := traces[0].Steps[len(traces[0].Steps)-1]
	if len(last.Text) < 200000 || last.Kind != trace.KindFinal {
		t.Errorf("long line not kept as the final answer: kind %s, %d bytes", last.Kind, len(last.Text))
	}
}

func TestCodexSeveralSessionsInOneFile(t *testing.T) {
	doubled := codexSample + codexSample + strings.Replace(codexSample, `"id":"s1"`, `"id":"s2"`, 1)
	traces, _ := decodeString(t, Codex{}, doubled)
	var ids []string
	for _, tr := range traces {
		ids = append(ids, tr.ID)
	}
	if strings.Join(ids, ",") != "s1,s1#2,s2" {
		t.Errorf("ids = %v", ids)
	}
}

func TestCodexSniff(t *testing.T) {
	tests := []struct {
		head string
		want bool
	}{
		{codexSample[:300], true},
		{`{"timestamp":"x","type":"event_msg","payload":{"type":"token_count"}}`, true},
		{`{"type":"response_item","payload":{"type":"message"`, true},
		{`[{"mas_name":"AG2","trace":"x"}]`, false},
		{`{"type":"session_meta"}`, false},
		{"plain text\n", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := (Codex{}).Sniff([]byte(tt.head)); got != tt.want {
			t.Errorf("Sniff(%.40q) = %v, want %v", tt.head, got, tt.want)
		}
	}
}

// TestCodexRealRollouts ingests every real Zero rollout.
func TestCodexRealRollouts(t *testing.T) {
	dir := shared.Path(t, "itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1/sessions")
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 28 {
		t.Fatalf("found %d rollouts, want 28", len(files))
	}
	empty, models := 0, map[string]int{}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !(Codex{}).Sniff(b[:min(len(b), SniffSize)]) {
			t.Errorf("%s: not sniffed as codex", p)
		}
		traces, issues := decodeString(t, Codex{}, string(b))
		for _, i := range issues {
			if i.Severity == Error {
				t.Errorf("%s: %s", filepath.Base(p), i)
			}
			if strings.Contains(i.Message, "is empty") {
				empty++
			}
		}
		for _, tr := range traces {
			models[tr.Model]++
			if tr.Task == "" {
				t.Errorf("%s: no task", tr.ID)
			}
		}
	}
	if empty != 3 {
		t.Errorf("%d empty sessions, want 3", empty)
	}
	if models["gemini-3-flash-preview"] != 4 || models["mistral"] != 3 || models["gpt-5.1-codex-max"] != 2 {
		t.Errorf("models = %v", models)
	}
}

// FuzzCodex feeds arbitrary bytes through sniffing and decoding: nothing may
// panic, and every trace that comes out must be structurally valid.
func FuzzCodex(f *testing.F) {
	for _, line := range strings.Split(codexSample, "\n") {
		f.Add([]byte(line))
	}
	f.Add([]byte(codexSample))
	f.Add([]byte(codexSample + codexSample))
	f.Add([]byte(`{"type":"response_item","payload":{"type":"function_call_output","call_id":"x","output":{"content":[{"type":"text","text":"hi"}],"success":false}}}`))
	f.Add([]byte(`{"type":"response_item","payload":{"type":"message","role":"user","content":"plain"}}` + "\n" + `{"type":"compacted","payload":{"message":"summary"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		(Codex{}).Sniff(data)
		in := &Input{Path: "fuzz", R: strings.NewReader(string(data)), report: func(Issue) {}}
		err := (Codex{}).Decode(context.Background(), in, func(tr *trace.Trace) error {
			if p := tr.Validate(); len(p) > 0 {
				t.Fatalf("invalid trace: %v", p)
			}
			if tr.ID == "" {
				t.Fatal("trace without id")
			}
			return nil
		})
		if err != nil {
			t.Fatalf("decode of in-memory input failed: %v", err)
		}
		fuzzLimited(t, Codex{}, data)
	})
}

func TestCodexMirroredHarnessMessagesAreKeptOnce(t *testing.T) {
	agents := `# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\nFind the root cause.\n</INSTRUCTIONS>`
	content := strings.Join([]string{
		`{"timestamp":"2026-01-15T16:08:40Z","type":"session_meta","payload":{"id":"m"}}`,
		`{"timestamp":"2026-01-15T16:08:40Z","type":"event_msg","payload":{"type":"user_message","message":"` + agents + `"}}`,
		`{"timestamp":"2026-01-15T16:08:40Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"` + agents + `"}]}}`,
		`{"timestamp":"2026-01-15T16:08:41Z","type":"turn_context","payload":{"model":"m","summary":"auto"}}`,
		`{"timestamp":"2026-01-15T16:08:42Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}`,
	}, "\n")
	traces, issues := decodeString(t, Codex{}, content)
	if len(issues) != 0 || len(traces) != 1 {
		t.Fatalf("traces %d, issues %v", len(traces), issues)
	}
	tr := traces[0]
	if len(tr.Steps) != 2 || tr.Steps[0].Type != "instructions" || tr.Steps[1].Kind != trace.KindFinal {
		t.Fatalf("steps = %+v", tr.Steps)
	}
	if tr.Task != "Find the root cause." {
		t.Errorf("task = %q", tr.Task)
	}
}
