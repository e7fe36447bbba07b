package ingest

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/faultline/faultline/internal/shared"
)

const atifSample = `{
  "schema_version": "ATIF-v1.7",
  "session_id": "s-1",
  "agent": {"name": "terminus", "version": "2.0", "model_name": "gpt-5"},
  "notes": "two tool calls in one turn",
  "steps": [
    {"step_id": 1, "timestamp": "2025-10-11T10:30:00Z", "source": "system", "message": "You are an agent. Never delete files."},
    {"step_id": 2, "timestamp": "2025-10-11T10:30:01Z", "source": "user", "message": "What is GOOGL trading at?"},
    {"step_id": 3, "timestamp": "2025-10-11T10:30:02Z", "source": "agent", "model_name": "gpt-5-mini",
     "message": "Searching price and volume.", "reasoning_content": "Two lookups at once.",
     "tool_calls": [
       {"tool_call_id": "p1", "function_name": "financial_search", "arguments": {"ticker": "GOOGL", "metric": "price"}},
       {"tool_call_id": "v1", "function_name": "financial_search", "arguments": {"ticker": "GOOGL", "metric": "volume"}}],
     "observation": {"results": [
       {"source_call_id": "v1", "content": "1.5M shares"},
       {"source_call_id": "p1", "content": "$185.35"},
       {"content": "", "subagent_trajectory_ref": [{"session_id": "sub-1", "trajectory_path": "s3://t/sub-1.json"}]}]},
     "metrics": {"prompt_tokens": 520, "completion_tokens": 80}},
    {"step_id": 4, "timestamp": "2025-10-11T10:30:04Z", "source": "system", "message": "Context compacted."},
    {"step_id": 5, "timestamp": "2025-10-11T10:30:05Z", "source": "agent", "message": [{"type": "text", "text": "GOOGL is at $185.35."}],
     "metrics": {"completion_tokens": 12}}
  ],
  "final_metrics": {"total_prompt_tokens": 1120, "total_completion_tokens": 92, "total_cached_tokens": 200, "total_cost_usd": 0.00078},
  "subagent_trajectories": [
    {"schema_version": "ATIF-v1.7", "session_id": "sub-1", "agent": {"name": "searcher", "version": "1"},
     "steps": [{"step_id": 1, "source": "user", "message": "Find volume"}, {"step_id": 2, "source": "agent", "message": "1.5M"}]}
  ]
}`

func TestATIFSniff(t *testing.T) {
	tests := []struct {
		name, head string
		want       bool
	}{
		{"trajectory", atifSample, true},
		{"version first, cut", `{"schema_version": "ATIF-v1.5", "session_id": "` + strings.Repeat("x", 10), true},
		{"required fields", `{"session_id": "s", "agent": {"name": "a"}, "steps": []}`, true},
		{"another schema", `{"schema_version": "2.0", "steps": []}`, false},
		{"a chat", `[{"role": "user", "content": "hi"}]`, false},
	}
	for _, tt := range tests {
		if got := (ATIF{}).Sniff([]byte(tt.head)); got != tt.want {
			t.Errorf("%s: Sniff = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestATIFTrajectory(t *testing.T) {
	traces, issues := decodeWith(t, ATIF{}, "t.json", strings.NewReader(atifSample))
	if len(traces) != 2 || len(issues) != 0 {
		t.Fatalf("traces %d, issues %v", len(traces), issues)
	}
	tr := traces[0]
	// The system prompt is instructions, a later system step a harness
	// event; a turn's tokens go to its last step.
	want := `0 system role=system type=instructions "You are an agent. Never delete files."
1 message role=user "What is GOOGL trading at?"
2 reasoning role=assistant "Two lookups at once."
3 message role=assistant "Searching price and volume."
4 tool_call role=assistant tool=financial_search id=p1 args={"ticker":"GOOGL","metric":"price"} pair=7 ""
5 tool_call role=assistant tool=financial_search id=v1 args={"ticker":"GOOGL","metric":"volume"} pair=6 tokens=80 ""
6 tool_result role=tool tool=financial_search id=v1 pair=5 "1.5M shares"
7 tool_result role=tool tool=financial_search id=p1 pair=4 "$185.35"
8 tool_result role=tool "[subagent trajectory sub-1 at s3://t/sub…"
9 system role=system "Context compacted."
10 final role=assistant tokens=12 "GOOGL is at $185.35."
`
	if got := stepLines(tr); got != want {
		t.Errorf("steps:\n%s\nwant\n%s", got, want)
	}
	if tr.ID != "atif:s-1" || tr.System != "terminus" || tr.Model != "gpt-5-mini" || tr.Task != "What is GOOGL trading at?" || tr.Meta["models"] != "gpt-5-mini,gpt-5" {
		t.Errorf("id %q system %q model %q task %q meta %v", tr.ID, tr.System, tr.Model, tr.Task, tr.Meta)
	}
	if tr.Usage.InputTokens != 1120 || tr.Usage.CachedInputTokens != 200 || tr.Usage.OutputTokens != 92 || tr.Meta["cost_usd"] != "0.00078" || tr.Meta["notes"] == "" {
		t.Errorf("usage %+v meta %v", tr.Usage, tr.Meta)
	}
	if at := tr.Steps[4].Time; !at.Equal(time.Date(2025, 10, 11, 10, 30, 2, 0, time.UTC)) {
		t.Errorf("step time %v", at)
	}
	sub := traces[1]
	if sub.ID != "atif:sub-1" || sub.Meta["parent_session"] != "atif:s-1" || len(sub.Steps) != 2 || sub.System != "searcher" {
		t.Errorf("subagent trace %s %v %s", sub.ID, sub.Meta, stepLines(sub))
	}
}

func TestATIFBadSteps(t *testing.T) {
	content := "{\"schema_version\": \"ATIF-v1.4\", \"session_id\": \"b\", \"agent\": {\"name\": \"a\"},\n \"steps\": [\n  {\"source\": \"user\", \"message\": \"hi\"},\n  {\"source\": \"agent\", \"tool_calls\": \"none\"},\n  {\"source\": \"robot\", \"message\": \"beep\"},\n  7\n ]}"
	traces, issues := decodeWith(t, ATIF{}, "b.json", strings.NewReader(content))
	want := []string{
		`b.json:4: record 0 (line 1): step 1: field "tool_calls" should be an array, found a string; step skipped`,
		`b.json:6: record 0 (line 1): step 3: a record should be an object, found a number; step skipped`,
	}
	if got := issueTexts(issues, Error); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := issueTexts(issues, Notice); len(n) != 1 || !strings.Contains(n[0], `b.json:5: record 0 (line 1): step 2: source "robot" is not system, user or agent`) {
		t.Errorf("notices %q", n)
	}
	if len(traces) != 1 || len(traces[0].Steps) != 2 {
		t.Errorf("traces %v", traces)
	}
}

func TestATIFOpenHandsSample(t *testing.T) {
	path := shared.Path(t, "samples/atif/openhands_hello-world.trajectory.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := Detect(data[:min(len(data), SniffSize)]); !ok || f.Name() != "atif" {
		t.Errorf("detected as %v", f)
	}
	traces, issues := decodeWith(t, ATIF{}, path, bytes.NewReader(data))
	if len(traces) != 1 {
		t.Fatalf("traces %d, issues %v", len(traces), issues)
	}
	tr := traces[0]
	want := `0 system role=system type=instructions "You are OpenHands agent, a helpful AI as…"
1 message role=user "Create a file called hello.txt with \"Hel…"
2 system role=system "Retrieving content for: Create a file ca…"
3 system role=system "Added workspace context"
4 message role=assistant "I edited the file /app/hello.txt."
5 tool_call role=assistant tool=str_replace_editor id=call_fake_1 args={"command":"create","path":"/app/hello.txt","file_text":"Hello, world!","security_risk":"LOW"} pair=6 tokens=50 ""
6 tool_result role=tool tool=str_replace_editor id=call_fake_1 pair=5 "File created successfully at: /app/hello…"
7 message role=assistant "All done! What's next on the agenda?"
8 tool_call role=assistant tool=finish id=call_fake_2 args={"message":"Task complete. Created /app/hello.txt with 'Hello, world!'"} tokens=30 ""
`
	if got := stepLines(tr); got != want {
		t.Errorf("steps:\n%s\nwant\n%s", got, want)
	}
	// OpenHands' finish call gets no observation: said, not an error.
	if n := issueTexts(issues, Notice); len(n) != 1 || !strings.Contains(n[0], `tool call "finish" (id "call_fake_2") has no result`) || len(issueTexts(issues, Error)) != 0 {
		t.Errorf("issues %v", issues)
	}
	if tr.System != "openhands" || tr.Usage.TotalTokens != 300 || tr.Meta["schema_version"] != "ATIF-v1.5" {
		t.Errorf("system %q usage %+v meta %v", tr.System, tr.Usage, tr.Meta)
	}
}

func FuzzATIF(f *testing.F) {
	f.Add([]byte(atifSample))
	f.Add([]byte(`{"session_id": "x", "agent": {}, "steps": [{"source": "agent", "observation": {"results": [{"content": [{"type": "image"}]}]}}], "subagent_trajectories": [{"steps": null}, 5]}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFormat(t, ATIF{}, data) })
}
