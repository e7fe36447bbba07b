package ingest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

// stepLines renders steps one a line, with the fields that are set, for
// comparing whole traces with what a test expects.
func stepLines(tr *trace.Trace) string {
	var b strings.Builder
	for _, s := range tr.Steps {
		fmt.Fprintf(&b, "%d %s", s.Index, s.Kind)
		for _, f := range []struct{ name, v string }{
			{"role", s.Role}, {"agent", s.Agent}, {"type", s.Type}, {"tool", s.Tool}, {"id", s.CallID}, {"args", s.Args},
		} {
			if f.v != "" {
				fmt.Fprintf(&b, " %s=%s", f.name, f.v)
			}
		}
		if s.Pair != nil {
			fmt.Fprintf(&b, " pair=%d", *s.Pair)
		}
		if s.ExitCode != nil {
			fmt.Fprintf(&b, " exit=%d", *s.ExitCode)
		}
		if s.IsError {
			b.WriteString(" error")
		}
		if s.Tokens > 0 {
			fmt.Fprintf(&b, " tokens=%d", s.Tokens)
		}
		fmt.Fprintf(&b, " %q\n", trace.Clip(s.Text, 40))
	}
	return b.String()
}

// chatShapes holds one conversation in each shape the chat reader knows:
// OpenAI's (string arguments, parallel calls answered out of order, the
// legacy function call), tau-bench's (object arguments, the id "0" reused,
// results without ids), Inspect's and Docent's (content parts with
// reasoning, the function's name as a string, a tool error), and messages
// of no known shape.
const chatShapes = `[
{"messages": [
 {"role": "system", "content": "You are a helpful agent. Never use rm."},
 {"role": "user", "content": [{"type": "text", "text": "List files"}, {"type": "image_url", "image_url": {"url": "x"}}]},
 {"role": "assistant", "content": null, "reasoning_content": "I should call ls.", "tool_calls": [
  {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\": \"ls\"}"}},
  {"id": "c2", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\": \"pwd\"}"}}]},
 {"role": "tool", "tool_call_id": "c2", "content": "/w"},
 {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
 {"role": "assistant", "content": "", "function_call": {"name": "lookup", "arguments": "{}"}},
 {"role": "function", "name": "lookup", "content": "found"},
 {"role": "assistant", "content": "Files: a.txt", "refusal": null}
], "id": "openai"},
{"messages": [
 {"role": "user", "content": "book a flight"},
 {"role": "assistant", "content": "Checking.", "tool_calls": [{"id": "0", "function": {"name": "get_user", "arguments": {"id": "u1"}}}]},
 {"role": "tool", "content": "{\"name\": \"Mia\"}", "tool_call_id": null},
 {"role": "assistant", "content": null, "tool_calls": [{"id": "0", "function": {"name": "a", "arguments": {}}}, {"id": "0", "function": {"name": "b", "arguments": {}}}]},
 {"role": "tool", "content": "A"},
 {"role": "tool", "content": "B"},
 {"role": "assistant", "content": "Booked."},
 {"role": "user", "content": "###STOP###"}
], "id": "tau"},
{"messages": [
 {"role": "user", "content": "Check the disk"},
 {"role": "assistant", "content": [{"type": "reasoning", "reasoning": "df will say"}, {"type": "text", "text": "Running df"}], "tool_calls": [{"id": "t1", "function": "bash", "arguments": {"cmd": "df"}, "type": "function"}], "model": "m"},
 {"role": "tool", "tool_call_id": "t1", "function": "bash", "content": "", "error": {"type": "timeout", "message": "Command timed out"}},
 {"role": "assistant", "content": [{"type": "reasoning", "reasoning": "", "redacted": true}], "tool_calls": [{"id": "t2", "function": "apply", "type": "custom", "input": "*** patch"}]},
 {"role": "tool", "tool_call_id": "t2", "content": "ok"},
 {"role": "critic", "content": "Looks fine"},
 {"role": "assistant", "content": ""}
], "id": "inspect"},
{"messages": [
 {"role": "user", "content": "hi"},
 {"role": 5, "content": "bad role"},
 "not a message",
 {"role": "assistant", "content": {"odd": true}}
], "id": "bad"}
]`

func TestChatShapes(t *testing.T) {
	traces, issues := decodeWith(t, OpenAIChat{}, "chats.json", strings.NewReader(chatShapes))
	if len(traces) != 4 {
		t.Fatalf("got %d traces, want 4; issues %v", len(traces), issues)
	}
	want := map[string]string{
		"chat:openai": `0 system role=system type=instructions "You are a helpful agent. Never use rm."
1 message role=user "List files\n[image]"
2 reasoning role=assistant "I should call ls."
3 tool_call role=assistant tool=shell id=c1 args={"cmd": "ls"} pair=6 ""
4 tool_call role=assistant tool=shell id=c2 args={"cmd": "pwd"} pair=5 ""
5 tool_result role=tool tool=shell id=c2 pair=4 "/w"
6 tool_result role=tool tool=shell id=c1 pair=3 "a.txt"
7 tool_call role=assistant tool=lookup id=#7 args={} pair=8 ""
8 tool_result role=tool tool=lookup id=#7 pair=7 "found"
9 final role=assistant "Files: a.txt"
`,
		// Results without ids answer the oldest open call; of two open calls
		// sharing the id "0", the first is told apart by its step.
		"chat:tau": `0 message role=user "book a flight"
1 message role=assistant "Checking."
2 tool_call role=assistant tool=get_user id=0 args={"id":"u1"} pair=3 ""
3 tool_result role=tool tool=get_user id=0 pair=2 "{\"name\": \"Mia\"}"
4 tool_call role=assistant tool=a id=0#4 args={} pair=6 ""
5 tool_call role=assistant tool=b id=0 args={} pair=7 ""
6 tool_result role=tool tool=a id=0#4 pair=4 "A"
7 tool_result role=tool tool=b id=0 pair=5 "B"
8 final role=assistant "Booked."
9 message role=user "###STOP###"
`,
		// A role of the system's own speaks as an agent of that name; an
		// empty answer is kept, as the model's silence is worth a finding.
		"chat:inspect": `0 message role=user "Check the disk"
1 reasoning role=assistant "df will say"
2 message role=assistant "Running df"
3 tool_call role=assistant tool=bash id=t1 args={"cmd":"df"} pair=4 ""
4 tool_result role=tool tool=bash id=t1 pair=3 error "timeout: Command timed out"
5 reasoning role=assistant "[redacted reasoning]"
6 tool_call role=assistant tool=apply id=t2 args=*** patch pair=7 ""
7 tool_result role=tool tool=apply id=t2 pair=6 "ok"
8 message role=assistant agent=critic "Looks fine"
9 final role=assistant ""
`,
		"chat:bad": `0 message role=user "hi"
1 final role=assistant "{\"odd\":true}"
`,
	}
	for _, tr := range traces {
		if got := stepLines(tr); got != want[tr.ID] {
			t.Errorf("%s:\n%s\nwant\n%s", tr.ID, got, want[tr.ID])
		}
	}
	if traces[2].Task != "Check the disk" || traces[0].Source != "chats.json#0" {
		t.Errorf("task %q, source %q", traces[2].Task, traces[0].Source)
	}
	wantIssues := []string{
		`chats.json:35: record 3 (line 33): message 1: field "role" should be a string, found a number; message skipped`,
		`chats.json:36: record 3 (line 33): message 2 should be an object, found a string; message skipped`,
	}
	if got := issueTexts(issues, Error); strings.Join(got, "\n") != strings.Join(wantIssues, "\n") {
		t.Errorf("errors:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantIssues, "\n"))
	}
	if n := issueTexts(issues, Notice); len(n) != 0 {
		t.Errorf("notices %q", n)
	}
}

func TestChatUnpairedCallsAreNoticed(t *testing.T) {
	content := `[{"role": "assistant", "tool_calls": [{"id": "x", "function": {"name": "f", "arguments": "{}"}}]},
{"role": "tool", "tool_call_id": "y", "content": "stray"}]`
	traces, issues := decodeString(t, OpenAIChat{}, content)
	if len(traces) != 1 {
		t.Fatalf("traces %d", len(traces))
	}
	notices := issueTexts(issues, Notice)
	want := []string{
		`mem.jsonl:1: record 0 (line 1): trace ` + traces[0].ID + `: step 1: tool result for call id "y" that has no call before it`,
		`mem.jsonl:1: record 0 (line 1): trace ` + traces[0].ID + `: step 0: tool call "f" (id "x") has no result`,
	}
	if strings.Join(notices, "\n") != strings.Join(want, "\n") {
		t.Errorf("notices:\n%s\nwant\n%s", strings.Join(notices, "\n"), strings.Join(want, "\n"))
	}
}
