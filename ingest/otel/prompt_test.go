package otel

import (
	"strings"
	"testing"

	"github.com/faultline/faultline/ingest/internal/oteltest"
)

func TestContinuation(t *testing.T) {
	tests := []struct {
		name, prev, cur, rest string
		ok                    bool
	}{
		{name: "more elements", prev: `[{"a":1}]`, cur: `[{"a":1},{"b":2}]`, rest: `[{"b":2}]`, ok: true},
		{name: "whitespace around the comma", prev: `[ {"a":1} ]`, cur: `[ {"a":1} ,{"b":2}]`, rest: `[{"b":2}]`, ok: true},
		{name: "the same list", prev: `[{"a":1}]`, cur: `[{"a":1}]`, rest: `[]`, ok: true},
		{name: "the same list spaced before its end", prev: `[{"a":1}]`, cur: `[{"a":1} ]`, rest: `[]`, ok: true},
		{name: "a comma before the end", prev: `[{"a":1}]`, cur: `[{"a":1}, ]`},
		{name: "a last element that goes on", prev: `[1]`, cur: `[12,3]`},
		{name: "an edited history", prev: `[{"a":1}]`, cur: `[{"a":2},{"b":2}]`},
		{name: "spaced otherwise", prev: `[{"a":1} ]`, cur: `[{"a":1},{"b":2}]`},
		{name: "shorter", prev: `[{"a":1},{"b":2}]`, cur: `[{"a":1}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rest, ok := continuation(tt.prev, tt.cur)
			if rest != tt.rest || ok != tt.ok {
				t.Errorf("continuation(%s, %s) = %q, %v; want %q, %v", tt.prev, tt.cur, rest, ok, tt.rest, tt.ok)
			}
		})
	}
}

// promptSpan is an LLM span of agent's, given list as gen_ai.input.messages,
// under an agent span whose id is agent's first byte.
func promptSpan(id byte, agent, sys, list, out string) Span {
	s := span(1, id, agent[0], int(id), "gen_ai.operation.name", "chat", "gen_ai.input.messages", list, "gen_ai.output.messages", out)
	if sys != "" {
		s.Attrs["gen_ai.system_instructions"] = sys
	}
	return s
}

// respaced gives each LLM span's list its own spacing after "[", so that
// no list starts with another's bytes and every one is read whole.
func respaced(spans []Span) []Span {
	out := make([]Span, len(spans))
	for i, s := range spans {
		out[i] = s
		if list, ok := strings.CutPrefix(s.Attrs["gen_ai.input.messages"], "["); ok {
			out[i].Attrs = map[string]string{}
			for k, v := range s.Attrs {
				out[i].Attrs[k] = v
			}
			out[i].Attrs["gen_ai.input.messages"] = "[" + strings.Repeat(" ", i+1) + list
		}
	}
	return out
}

// withAgents puts spans under agent spans a and b.
func withAgents(spans ...Span) []Span {
	return append([]Span{
		span(1, 'a', 0, 0, "gen_ai.operation.name", "invoke_agent", "gen_ai.agent.name", "a"),
		span(1, 'b', 0, 0, "gen_ai.operation.name", "invoke_agent", "gen_ai.agent.name", "b"),
	}, spans...)
}

// Reading only the elements that follow the agent's previous list gives the
// steps that reading every list whole gives.
func TestPromptInputSameAsWholeLists(t *testing.T) {
	user := func(text string) string { return `{"role":"user","parts":[{"type":"text","content":"` + text + `"}]}` }
	asst := func(text string) string {
		return `{"role":"assistant","parts":[{"type":"text","content":"` + text + `"}]}`
	}
	call := `{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"ls","arguments":{}}]}`
	result := `{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"a.txt"}]}`
	tests := []struct {
		name  string
		spans []Span
		steps int
	}{
		{
			name: "a growing conversation with a tool call",
			spans: withAgents(
				promptSpan(1, "a", "", "["+user("list")+"]", "["+call+"]"),
				promptSpan(2, "a", "", "["+user("list")+","+call+","+result+"]", "["+asst("one file")+"]"),
				promptSpan(3, "a", "", "["+user("list")+","+call+","+result+","+asst("one file")+","+user("thanks")+"]", "["+asst("bye")+"]"),
			),
			steps: 6,
		},
		{
			name: "a message sent again after its history",
			spans: withAgents(
				promptSpan(1, "a", "", "["+user("go on")+"]", "["+asst("ok")+"]"),
				promptSpan(2, "a", "", "["+user("go on")+","+asst("ok")+","+user("go on")+"]", "["+asst("ok")+"]"),
				promptSpan(3, "a", "", "["+user("go on")+","+asst("ok")+","+user("go on")+","+asst("ok")+","+user("go on")+"]", "["+asst("done")+"]"),
			),
			steps: 6,
		},
		{
			name: "the same list twice, then an edited history",
			spans: withAgents(
				promptSpan(1, "a", "", "["+user("x")+","+user("y")+"]", "["+asst("ok")+"]"),
				promptSpan(2, "a", "", "["+user("x")+","+user("y")+"]", "["+asst("ok")+"]"),
				promptSpan(3, "a", "", "["+user("summary")+","+user("y")+"]", "["+asst("ok")+"]"),
			),
			steps: 6,
		},
		{
			name: "instructions that change",
			spans: withAgents(
				promptSpan(1, "a", "be brief", "["+user("x")+"]", "["+asst("ok")+"]"),
				promptSpan(2, "a", "be brief", "["+user("x")+","+asst("ok")+","+user("y")+"]", "["+asst("ok")+"]"),
				promptSpan(3, "a", "be kind", "["+user("x")+","+asst("ok")+","+user("y")+","+asst("ok")+"]", "["+asst("fine")+"]"),
			),
			steps: 7,
		},
		{
			name: "two agents in turn",
			spans: withAgents(
				promptSpan(1, "a", "", "["+user("x")+"]", "["+asst("ok")+"]"),
				promptSpan(2, "b", "", "["+user("x")+"]", "["+asst("ok")+"]"),
				promptSpan(3, "a", "", "["+user("x")+","+asst("ok")+","+user("x")+"]", "["+asst("ok")+"]"),
				promptSpan(4, "b", "", "["+user("x")+","+asst("ok")+","+user("y")+"]", "["+asst("ok")+"]"),
			),
			steps: 8,
		},
		{
			name: "an empty list, then a list of one",
			spans: withAgents(
				promptSpan(1, "a", "", "[]", "["+asst("hello")+"]"),
				promptSpan(2, "a", "", "["+user("x")+"]", "["+asst("ok")+"]"),
			),
			steps: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, notes := Trace(tt.spans, "otlp-json", "mem")
			whole, wholeNotes := Trace(respaced(tt.spans), "otlp-json", "mem")
			if got, want := oteltest.Steps(tr), oteltest.Steps(whole); got != want {
				t.Errorf("steps:\n%s\nread whole:\n%s", got, want)
			}
			if len(tr.Steps) != tt.steps {
				t.Errorf("%d steps, want %d:\n%s", len(tr.Steps), tt.steps, oteltest.Steps(tr))
			}
			if got, want := strings.Join(notes, "|"), strings.Join(wholeNotes, "|"); got != want {
				t.Errorf("notes %q, read whole %q", got, want)
			}
		})
	}
}

// A list whose elements after the previous list's do not decode is kept as
// text, with its note, as when it is read whole.
func TestPromptInputBrokenContinuation(t *testing.T) {
	first := `[{"role":"user","content":"x"}]`
	for _, tt := range []struct{ name, list, note string }{
		{name: "a syntax error", list: `[{"role":"user","content":"x"}, oops]`,
			note: `span 0200000000000000 "s2": gen_ai.input.messages is not a list of messages (invalid character 'o' looking for beginning of value); kept as text`},
		{name: "a role that is not text", list: `[{"role":"user","content":"x"},{"role":5}]`,
			note: `span 0200000000000000 "s2": gen_ai.input.messages is not a list of messages (json: cannot unmarshal number into Go struct field jsonMessage.Message.role of type string); kept as text`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr, notes := Trace(withAgents(promptSpan(1, "a", "", first, "[]"), promptSpan(2, "a", "", tt.list, "[]")), "otlp-json", "mem")
			want := "0 message user @a [0100000000000000] x\n1 message user @a [0200000000000000] " + tt.list + "\n"
			if got := oteltest.Steps(tr); got != want {
				t.Errorf("steps:\n%s\nwant:\n%s", got, want)
			}
			if got := strings.Join(notes, "|"); got != tt.note {
				t.Errorf("notes %q, want %q", got, tt.note)
			}
		})
	}
}

// FuzzPromptInput maps three LLM spans whose lists grow by the elements
// given: the steps are those of every list read whole, and each list that
// does not decode as a whole has its note.
func FuzzPromptInput(f *testing.F) {
	f.Add(`{"role":"user","content":"x"}`, `{"role":"assistant","content":"ok"}`, `{"role":"user","content":"x"}`)
	f.Add(`{"role":"user","parts":[{"type":"tool_call","id":"1","name":"ls"}]}`, `{"role":"tool","tool_call_id":"1","content":"a"}`, `{}`)
	f.Add(`{"role":"user","content":"x"}`, `oops`, `{"role":5}`)
	f.Add(`1`, `2`, `3`)
	f.Fuzz(func(t *testing.T, a, b, c string) {
		lists := []string{"[" + a + "]", "[" + a + "," + b + "]", "[" + a + "," + b + "," + c + "]"}
		spans, broken := withAgents(), 0
		for i, list := range lists {
			if _, err := parseJSONMessages(list, "user"); err != nil {
				broken++
			}
			spans = append(spans, promptSpan(byte(i+1), "a", "", list, `[{"role":"assistant","content":"ok"}]`))
		}
		tr, notes := Trace(spans, "otlp-json", "mem")
		if got := strings.Count(strings.Join(notes, "|"), "gen_ai.input.messages is not a list"); got != broken {
			t.Errorf("%d notes of a list that does not decode, want %d: %q", got, broken, notes)
		}
		if broken > 0 {
			return // kept as text, which respacing changes
		}
		whole, _ := Trace(respaced(spans), "otlp-json", "mem")
		if got, want := oteltest.Steps(tr), oteltest.Steps(whole); got != want {
			t.Errorf("steps:\n%s\nread whole:\n%s", got, want)
		}
	})
}
