package otel

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/faultline/faultline/ingest/internal/oteltest"
)

// span builds a span for mapping tests.
func span(trace, id, parent byte, start int, attrs ...string) Span {
	s := Span{TraceID: pcommon.TraceID{trace}, SpanID: pcommon.SpanID{id}, Name: fmt.Sprintf("s%d", id),
		Start: time.Unix(int64(start), 0), End: time.Unix(int64(start)+1, 0), Attrs: map[string]string{}}
	if parent != 0 {
		s.ParentID = pcommon.SpanID{parent}
	}
	for i := 0; i+1 < len(attrs); i += 2 {
		s.Attrs[attrs[i]] = attrs[i+1]
	}
	return s
}

func TestTraceMapping(t *testing.T) {
	chat := func(id, parent byte, start int, in, out string) Span {
		return span(1, id, parent, start, "gen_ai.operation.name", "chat", "gen_ai.input.messages", in, "gen_ai.output.messages", out)
	}
	user := func(text string) string { return `{"role":"user","parts":[{"type":"text","content":"` + text + `"}]}` }
	asst := func(text string) string {
		return `{"role":"assistant","parts":[{"type":"text","content":"` + text + `"}]}`
	}
	tests := []struct {
		name  string
		spans []Span
		steps string
		notes string
	}{
		{
			name: "a message really sent twice is kept twice, history once",
			spans: []Span{
				chat(1, 0, 1, "["+user("go on")+"]", "["+asst("ok")+"]"),
				chat(2, 0, 2, "["+user("go on")+","+asst("ok")+","+user("go on")+"]", "["+asst("done")+"]"),
			},
			steps: "0 message user [0100000000000000] go on\n1 message assistant [0100000000000000] ok\n2 message user [0200000000000000] go on\n3 final assistant [0200000000000000] done\n",
		},
		{
			name: "duplicates, a missing parent and a parent cycle",
			spans: []Span{
				chat(1, 9, 1, "["+user("a")+"]", "["+asst("b")+"]"),
				chat(1, 9, 1, "["+user("a")+"]", "["+asst("b")+"]"),
				chat(2, 3, 5, "["+user("c")+"]", "[]"),
				chat(3, 2, 6, "["+user("d")+"]", "[]"),
			},
			steps: "0 message user [0100000000000000] a\n1 final assistant [0100000000000000] b\n2 message user [0200000000000000] c\n3 message user [0300000000000000] d\n",
			notes: "1 spans received more than once; kept once|1 spans whose parent span is missing; placed at the top|2 spans in a parent cycle; placed at the top",
		},
		{
			name: "a tool span without a call id answers the call its LLM made",
			spans: []Span{
				span(1, 1, 0, 1, "gen_ai.operation.name", "invoke_agent", "gen_ai.agent.name", "planner"),
				span(1, 2, 1, 2, "openinference.span.kind", "LLM", "llm.output_messages.0.message.tool_calls.0.tool_call.function.name", "ls",
					"llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments", "{}"),
				span(1, 3, 1, 4, "openinference.span.kind", "TOOL", "tool.name", "ls", "output.value", "a.txt"),
			},
			steps: "0 tool_call assistant @planner ls({}) #span:0200000000000000:0 [0200000000000000] \n1 tool_result tool @planner ls() #span:0200000000000000:0 [0300000000000000] a.txt\n",
		},
		{
			name: "messages that are not JSON are kept as text",
			spans: []Span{
				span(1, 1, 0, 1, "gen_ai.operation.name", "chat", "gen_ai.input.messages", "[not json", "gen_ai.output.messages", "plain answer"),
			},
			steps: "0 message user [0100000000000000] [not json\n1 final assistant [0100000000000000] plain answer\n",
			notes: `span 0100000000000000 "s1": gen_ai.input.messages is not a list of messages (invalid character 'o' in literal null (expecting 'u')); kept as text`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, notes := Trace(tt.spans, "otlp-json", "mem")
			if tr == nil {
				t.Fatal("no trace")
			}
			if got := oteltest.Steps(tr); got != tt.steps {
				t.Errorf("steps:\n%s\nwant:\n%s", got, tt.steps)
			}
			if got := strings.Join(notes, "|"); got != tt.notes {
				t.Errorf("notes %q, want %q", got, tt.notes)
			}
			if p := tr.Validate(); len(p) > 0 {
				t.Errorf("invalid: %v", p)
			}
		})
	}
	if tr, notes := Trace([]Span{span(1, 1, 0, 1, "http.route", "/")}, "otlp-json", "mem"); tr != nil || len(notes) != 1 {
		t.Errorf("a trace of no agent: %v %v", tr, notes)
	}
}

// A trace keeps the tree of its spans, those that wrote no step too, with
// their parents and times.
func TestTraceKeepsItsSpanTree(t *testing.T) {
	agent := span(1, 1, 0, 1, "gen_ai.operation.name", "invoke_agent", "gen_ai.agent.name", "planner")
	tool := span(1, 2, 1, 2, "openinference.span.kind", "TOOL", "tool.name", "ls", "output.value", "a.txt")
	get := span(1, 3, 2, 3, "http.route", "/files")
	get.Failed = true
	tr, _ := Trace([]Span{agent, tool, get}, "otlp-json", "mem")
	if tr == nil {
		t.Fatal("no trace")
	}
	got := tr.Spans()
	want := []string{"0100000000000000<-:s1", "0200000000000000<-0100000000000000:s2", "0300000000000000<-0200000000000000:s3!"}
	if len(got) != len(want) {
		t.Fatalf("%d spans in the tree, want %d: %+v", len(got), len(want), got)
	}
	for i, s := range got {
		line := s.ID + "<-" + s.Parent + ":" + s.Name
		if s.Failed {
			line += "!"
		}
		if s.Parent == "" {
			line = s.ID + "<-:" + s.Name
		}
		if line != want[i] || !s.Start.Equal(time.Unix(int64(i+1), 0)) {
			t.Errorf("span %d: %s at %v, want %s", i, line, s.Start, want[i])
		}
	}
}
