package ingest

import (
	"strings"
	"testing"
)

func TestOpenAIChatSniff(t *testing.T) {
	tests := []struct {
		name, head string
		want       bool
	}{
		{"array of messages", `[{"role": "system", "content": "x"}, {"role": "user", "content": "hi"}]`, true},
		{"message lines", "{\"role\": \"user\", \"content\": \"hi\"}\n{\"role\": \"assistant\", \"content\": \"yo\"}\n", true},
		{"tool calls only", `[{"role": "assistant", "tool_calls": []}]`, true},
		{"a conversation", `{"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}`, true},
		{"conversation lines", "{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}]}\n{\"messages\": []}", true},
		{"array of conversations", `[{"messages": [{"role": "developer", "content": "a"}]}]`, true},
		{"lists", "[[{\"role\": \"user\", \"content\": \"a\"}],\n[{\"role\": \"user\", \"content\": \"b\"}]]", true},
		{"cut in the first message", `[{"role": "user", "content": "` + strings.Repeat("a", 100), true},
		{"a framework's roles", `[{"role": "Orchestrator (thought)", "content": "x"}]`, false},
		{"human and ai", `[{"role": "human", "content": "x"}]`, false},
		{"no content", `[{"role": "user"}]`, false},
		{"messages of no role", `{"messages": [{"text": "x"}]}`, false},
		{"codex", `{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}`, false},
		{"not JSON", `role: user`, false},
	}
	for _, tt := range tests {
		if got := (OpenAIChat{}).Sniff([]byte(tt.head)); got != tt.want {
			t.Errorf("%s: Sniff = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestOpenAIChatForms(t *testing.T) {
	tests := []struct {
		name, content string
		ids           []string
		steps         []int
	}{
		// Loose messages, in an array or one a line, are one conversation
		// named by a hash of its messages.
		{"array", `[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]`, []string{"chat:7399cb42c495"}, []int{2}},
		{"lines", "{\"role\": \"user\", \"content\": \"a\"}\n{\"role\": \"assistant\", \"content\": \"b\"}\n", []string{"chat:7399cb42c495"}, []int{2}},
		// Conversations, objects or lists, are one trace each; a repeated
		// id takes the record's place.
		{"conversation lines", "{\"id\": \"x\", \"messages\": [{\"role\": \"user\", \"content\": \"a\"}]}\n{\"id\": \"x\", \"messages\": [{\"role\": \"user\", \"content\": \"b\"}, {\"role\": \"assistant\", \"content\": \"c\"}]}\n",
			[]string{"chat:x", "chat:x#1"}, []int{1, 2}},
		{"lists", "[[{\"role\": \"user\", \"content\": \"a\"}],\n [{\"role\": \"user\", \"content\": \"b\"}]]\n", []string{"chat:6252ebb39510", "chat:745d0cd62d53"}, []int{1, 1}},
	}
	for _, tt := range tests {
		traces, issues := decodeString(t, OpenAIChat{}, tt.content)
		if len(issues) > 0 || len(traces) != len(tt.ids) {
			t.Errorf("%s: %d traces, issues %v", tt.name, len(traces), issues)
			continue
		}
		for i, tr := range traces {
			if tr.ID != tt.ids[i] || len(tr.Steps) != tt.steps[i] || tr.Format != "openai-chat" {
				t.Errorf("%s: trace %d is %s with %d steps, want %s with %d", tt.name, i, tr.ID, len(tr.Steps), tt.ids[i], tt.steps[i])
			}
		}
	}
}

func TestOpenAIChatConversationFields(t *testing.T) {
	content := `{"model": "gpt-4o", "messages": [{"role": "user", "content": "What is 2+2?"}, {"role": "assistant", "content": "4"}], "tools": [{"type": "function"}]}`
	traces, _ := decodeString(t, OpenAIChat{}, content)
	if len(traces) != 1 || traces[0].Model != "gpt-4o" || traces[0].Task != "What is 2+2?" || traces[0].Steps[1].Kind != "final" {
		t.Fatalf("traces %+v", traces)
	}
}

func TestOpenAIChatBadRecords(t *testing.T) {
	content := "{\"role\": \"user\", \"content\": \"a\"}\n{\"text\": \"neither\"}\n{\"messages\": \"no\"}\n{\"model\": 4, \"messages\": []}\n7\n{\"role\": \"assistant\", \"content\": \"b\"}\n"
	traces, issues := decodeString(t, OpenAIChat{}, content)
	want := []string{
		`mem.jsonl:2: record 1 (line 2): neither a message (no role) nor a conversation (no messages); record skipped`,
		`mem.jsonl:3: record 2 (line 3): field "messages" should be an array, found a string; messages skipped`,
		`mem.jsonl:4: record 3 (line 4): field "model" should be a string, found a number; record skipped`,
		`mem.jsonl:5: record 4 (line 5): a record should be an object, found a number; record skipped`,
	}
	if got := issueTexts(issues, Error); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The conversation with no messages is kept, empty; the loose messages
	// around the bad records are one conversation.
	if len(traces) != 2 || len(traces[0].Steps) != 0 || len(traces[1].Steps) != 2 {
		t.Errorf("traces %d", len(traces))
	}
}

func FuzzOpenAIChat(f *testing.F) {
	f.Add([]byte(chatShapes))
	f.Add([]byte("{\"role\": \"user\", \"content\": \"a\"}\n{\"role\": \"tool\", \"content\": \"b\"}\n[{\"role\": \"assistant\", \"tool_calls\": [{\"function\": \"f\"}]}]"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFormat(t, OpenAIChat{}, data) })
}

// FuzzChatSteps: a conversation in progress gives steps of known kinds, or
// an error, and never panics.
func FuzzChatSteps(f *testing.F) {
	f.Add([]byte(`[{"role": "system", "content": "s"}, {"role": "user", "content": "u"}, {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c", "content": "r"}]`))
	f.Add([]byte(`[{"role": "assistant", "content": [{"type": "text", "text": "a"}]}]`))
	f.Add([]byte(`{"role": "user"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		steps, err := ChatSteps(data)
		if err != nil {
			return
		}
		for _, s := range steps {
			if !s.Kind.Valid() {
				t.Errorf("step of kind %q", s.Kind)
			}
		}
	})
}
