package receive

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest/otel"
	"github.com/faultline/faultline/trace"
)

// An agent run as spans: an invoke_agent root (1) and, under it, chat calls
// and a tool call, at seconds 1 to 4, and a chat call (6) that no later
// call repeats.
func mergeSpans() []otel.Span {
	user := `{"role":"user","parts":[{"type":"text","content":"Why is checkout slow?"}]}`
	call := `{"role":"assistant","parts":[{"type":"text","content":"Checking metrics."},{"type":"tool_call","id":"c1","name":"get_metrics","arguments":{}}]}`
	result := `{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"p99 4.2s"}]}`
	look := `{"role":"assistant","parts":[{"type":"text","content":"Looking at the payment service."}]}`
	answer := `{"role":"assistant","parts":[{"type":"text","content":"The payment service."}]}`
	fine := `{"role":"assistant","parts":[{"type":"text","content":"The database is fine."}]}`
	span := func(id byte, start int, attrs ...string) otel.Span {
		s := otel.Span{TraceID: pcommon.TraceID{7}, SpanID: pcommon.SpanID{id}, Name: fmt.Sprintf("s%d", id),
			Start: time.Unix(int64(start), 0), End: time.Unix(int64(start), 5e8), Attrs: map[string]string{}}
		if id != 1 {
			s.ParentID = pcommon.SpanID{1}
		}
		for i := 0; i+1 < len(attrs); i += 2 {
			s.Attrs[attrs[i]] = attrs[i+1]
		}
		return s
	}
	root := span(1, 0, "gen_ai.operation.name", "invoke_agent", "gen_ai.agent.name", "sre")
	root.End = time.Unix(10, 0)
	aside := span(6, 3, "gen_ai.operation.name", "chat", "gen_ai.input.messages", "["+user+"]", "gen_ai.output.messages", "["+fine+"]",
		"gen_ai.usage.output_tokens", "7")
	aside.Start, aside.End = time.Unix(3, 7e8), time.Unix(4, 2e8)
	return []otel.Span{
		root,
		span(2, 1, "gen_ai.operation.name", "chat", "gen_ai.input.messages", "["+user+"]", "gen_ai.output.messages", "["+call+"]"),
		span(3, 2, "gen_ai.operation.name", "execute_tool", "gen_ai.tool.name", "get_metrics", "gen_ai.tool.call.id", "c1", "gen_ai.tool.call.result", "p99 4.2s"),
		span(4, 3, "gen_ai.operation.name", "chat", "gen_ai.input.messages", "["+user+","+call+","+result+"]", "gen_ai.output.messages", "["+look+"]",
			"gen_ai.usage.output_tokens", "10"),
		span(5, 4, "gen_ai.operation.name", "chat", "gen_ai.input.messages", "["+user+","+call+","+result+","+look+"]", "gen_ai.output.messages", "["+answer+"]"),
		aside,
	}
}

// pick returns the spans of the given ids.
func pick(spans []otel.Span, ids ...byte) []otel.Span {
	var out []otel.Span
	for _, s := range spans {
		if slices.Contains(ids, s.SpanID[0]) {
			out = append(out, s)
		}
	}
	return out
}

// render lists steps as kind@span, with the agent when it is not "sre".
func render(t *trace.Trace) string {
	var out []string
	for _, s := range t.Steps {
		r := fmt.Sprintf("%s@%s", s.Kind, strings.TrimRight(s.SpanID, "0"))
		if s.Agent != "sre" {
			r += "(" + s.Agent + ")"
		}
		out = append(out, r)
	}
	return strings.Join(out, " ")
}

func TestMerge(t *testing.T) {
	all := mergeSpans()
	whole, _ := otel.Trace(all, "otlp-json", "test")
	fiveSpans, _ := otel.Trace(pick(all, 1, 2, 3, 4, 5), "otlp-json", "test")
	tests := []struct {
		name   string
		stored []byte // the spans of the stored trace
		late   []byte // the spans arriving late
		added  int
		steps  string
		whole  *trace.Trace // the trace of all these spans mapped at once
	}{
		{"a span sent again adds nothing", []byte{1, 2, 3, 4, 5, 6}, []byte{3}, 0, "", nil},
		{"the whole trace sent again adds nothing", []byte{1, 2, 3, 4, 5, 6}, []byte{1, 2, 3, 4, 5, 6}, 0, "", nil},
		{"the last chat call, late, ends the trace", []byte{1, 2, 3, 4}, []byte{5}, 1,
			"message@02 message@02 tool_call@02 tool_result@03 message@04 final@05", fiveSpans},
		{"a chat call in the middle goes in its place", []byte{1, 2, 3, 4, 5}, []byte{6}, 1,
			"message@02 message@02 tool_call@02 tool_result@03 message@04 message@06 final@05", whole},
		{"a stored span among the late ones adds nothing", []byte{1, 2, 3, 4, 5}, []byte{2, 6}, 1,
			"message@02 message@02 tool_call@02 tool_result@03 message@04 message@06 final@05", whole},
		{"what a later stored call repeated adds nothing", []byte{1, 2, 3, 5}, []byte{4}, 0, "", nil},
		{"a tool result the next call repeated adds nothing", []byte{1, 2, 4, 5}, []byte{3}, 0, "", nil},
		{"the root, late, adds no step but completes the run", []byte{2, 3, 4, 5}, []byte{1}, 0,
			"message@02() message@02() tool_call@02() tool_result@03() message@04() final@05()", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stored, _ := otel.Trace(pick(all, tt.stored...), "otlp-json", "test")
			before := render(stored)
			m, changed := merge(stored, pick(all, tt.late...))
			if added := len(m.Steps) - len(stored.Steps); added != tt.added || changed != (tt.steps != "") {
				t.Fatalf("added %d steps, want %d: %s", added, tt.added, render(m))
			}
			if render(stored) != before {
				t.Errorf("the stored trace changed: %s", render(stored))
			}
			if !changed {
				if m != stored {
					t.Error("a merge adding nothing returned a new trace")
				}
				return
			}
			if got := render(m); got != tt.steps {
				t.Errorf("steps\n got %s\nwant %s", got, tt.steps)
			}
			if tt.whole != nil && render(m) != render(tt.whole) {
				t.Errorf("merged steps differ from the trace mapped whole\n got %s\nwant %s", render(m), render(tt.whole))
			}
			for i, s := range m.Steps {
				if s.Index != i {
					t.Errorf("step %d has index %d", i, s.Index)
				}
			}
			if problems := m.Validate(); len(problems) > 0 {
				t.Errorf("invalid: %v", problems)
			}
			if m.Meta["otel.spans"] != fmt.Sprint(len(tt.stored)+1) {
				t.Errorf("otel.spans %q", m.Meta["otel.spans"])
			}
		})
	}
}

// A merge renumbers the steps the stored findings cite, drops the
// detectors' (to be run again on the merged trace), and adds the late
// spans' tokens.
func TestMergeFindingsAndRun(t *testing.T) {
	all := mergeSpans()
	stored, _ := otel.Trace(pick(all, 2, 3, 4, 5), "otlp-json", "test")
	stored.Findings = []trace.Finding{
		{Source: "judge:gpt", Mode: "FM-1.1", Verdict: trace.Present, Steps: []int{3, 5}},
		{Source: detect.Source, Mode: "FM-3.2", Verdict: trace.Present, Steps: []int{4}, Detector: "x"},
	}
	stored.DetectedWith = "v1"
	stored.SetMeta("otel.incomplete", "no root span within the idle timeout")
	m, changed := merge(stored, pick(all, 6))
	if !changed || len(m.Steps) != len(stored.Steps)+1 {
		t.Fatalf("steps %s", render(m))
	}
	if len(m.Findings) != 1 || !slices.Equal(m.Findings[0].Steps, []int{3, 6}) || m.DetectedWith != "" {
		t.Errorf("findings %+v, detected with %q", m.Findings, m.DetectedWith)
	}
	if !slices.Equal(stored.Findings[0].Steps, []int{3, 5}) {
		t.Errorf("the stored finding changed: %v", stored.Findings[0].Steps)
	}
	if m.Usage.OutputTokens != stored.Usage.OutputTokens+7 {
		t.Errorf("usage %+v, stored %+v", m.Usage, stored.Usage)
	}
	if m.Meta["otel.incomplete"] == "" {
		t.Error("a trace still without its root lost its incomplete mark")
	}
	if m, changed := merge(m, pick(all, 1)); !changed || m.Meta["otel.incomplete"] != "" || m.Meta["otel.root_span_id"] == "" {
		t.Errorf("the root came, the trace is still marked incomplete: %v", m.Meta)
	}
}

// Late spans whose agent span is stored take the agent of the stored step
// before them; spans under a late agent span keep theirs.
func TestMergeAgents(t *testing.T) {
	all := mergeSpans()
	stored, _ := otel.Trace(pick(all, 1, 2, 3, 4), "otlp-json", "test")
	sub := all[4]
	sub.SpanID = pcommon.SpanID{9}
	sub.Attrs = map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"}
	chat := all[4]
	chat.SpanID, chat.ParentID = pcommon.SpanID{8}, sub.SpanID
	m, changed := merge(stored, []otel.Span{all[4], sub, chat})
	if !changed {
		t.Fatal("nothing added")
	}
	for _, s := range m.Steps[len(stored.Steps):] {
		if want := map[string]string{"05": "sre", "08": "helper"}[strings.TrimRight(s.SpanID, "0")]; s.Agent != want {
			t.Errorf("step %d of span %s: agent %q, want %q (%s)", s.Index, s.SpanID, s.Agent, want, render(m))
		}
	}
}

// Late spans join the stored trace's span tree, each once; a stored trace
// that keeps no tree is not given a part of one.
func TestMergeSpanTree(t *testing.T) {
	all := mergeSpans()
	ids := func(tr *trace.Trace) []string {
		var out []string
		for _, sp := range tr.Spans() {
			out = append(out, strings.TrimRight(sp.ID, "0"))
		}
		slices.Sort(out)
		return out
	}
	stored, _ := otel.Trace(pick(all, 2, 3, 4, 5), "otlp-json", "test")
	m, changed := merge(stored, pick(all, 1, 5, 6))
	if want := []string{"01", "02", "03", "04", "05", "06"}; !changed || !slices.Equal(ids(m), want) {
		t.Errorf("merged tree %v, want %v", ids(m), want)
	}
	delete(stored.Meta, trace.SpanTreeMeta)
	if m, _ := merge(stored, pick(all, 6)); m.Spans() != nil {
		t.Errorf("a trace without a tree got part of one: %v", ids(m))
	}
}
