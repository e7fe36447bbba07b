package otel

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/faultline/faultline/ingest/internal/chat"
	"github.com/faultline/faultline/trace"
)

// StatusMetric names the outcome a failed root span gives a trace: the
// run's own report that it broke, not a grade of its answer.
const StatusMetric = "otel_status"

// Trace maps the spans of one OTLP trace to a faultline trace. It
// returns nil when no span is an LLM call, tool call or agent of the
// vocabularies read (a trace of some other service), and notes on what could
// not be placed.
func Trace(spans []Span, format, source string) (*trace.Trace, []string) {
	if len(spans) == 0 {
		return nil, nil
	}
	id := spans[0].TraceID
	m := &mapper{
		t:    &trace.Trace{ID: id.String(), Format: format, Source: source},
		seen: map[string]int{}, pending: map[string][]string{}, prompts: map[string]*prompt{},
	}
	m.t.SetMeta("otel.trace_id", id.String())
	tr := newTree(spans, &m.notes)
	if !slices.ContainsFunc(tr.spans, func(s *Span) bool { return kindOf(s) != kindOther }) {
		return nil, append(m.notes, "no LLM, tool or agent spans (GenAI, OpenInference or OpenLLMetry); not stored")
	}
	// A span gives a step or two (a call and its result): grown step by
	// step, the list was the largest of a received trace's allocations.
	m.t.Steps = make([]trace.Step, 0, len(spans)+len(spans)/2)
	tr.walk(m)
	if len(m.t.Steps) == 0 {
		m.t.Steps = nil
	}
	m.finish(tr)
	return m.t, m.notes
}

// finish fills in what is known only once every span was read.
func (m *mapper) finish(tr *tree) {
	t := m.t
	for _, s := range tr.spans {
		if !s.Start.IsZero() && (t.Started.IsZero() || s.Start.Before(t.Started)) {
			t.Started = s.Start
		}
		if s.End.After(t.Ended) {
			t.Ended = s.End
		}
		if s.Service != "" && t.System == "" && !strings.HasPrefix(s.Service, "unknown_service") {
			t.System = s.Service
		}
		if v := firstAttr(s, "gen_ai.conversation.id", "session.id"); v != "" {
			t.SetMeta("session_id", v)
		}
		switch {
		case s.Attrs["gen_ai.operation.name"] != "" || s.Attrs["gen_ai.input.messages"] != "" || s.Attrs["gen_ai.output.messages"] != "":
			m.uses("gen_ai")
		case s.Attrs["openinference.span.kind"] != "":
			m.uses("openinference")
		case kindOf(s) != kindOther:
			m.uses("gen_ai-legacy")
		}
	}
	if len(m.models) > 0 {
		t.Model = m.models[0]
		if len(m.models) > 1 {
			t.SetMeta("models", strings.Join(m.models, ","))
		}
	}
	sort.Strings(m.vocab)
	t.SetMeta("otel.conventions", strings.Join(m.vocab, ","))
	t.SetMeta("otel.spans", strconv.Itoa(len(tr.spans)))
	t.SetSpans(spanTree(tr))
	for i := range t.Steps {
		if s := &t.Steps[i]; s.Kind == trace.KindMessage && s.Role == trace.RoleUser {
			t.Task = s.Text
			break
		}
	}
	for _, r := range tr.roots {
		root := tr.spans[r]
		if !root.ParentID.IsEmpty() {
			continue
		}
		// Findings about the run as a whole point at its root span on export.
		t.SetMeta("otel.root_span_id", root.SpanID.String())
		if root.Failed {
			no := false
			t.Outcomes = append(t.Outcomes, trace.Outcome{Source: trace.FormatOutcomeSource, Metric: StatusMetric, Success: &no, Detail: m.errorText(root)})
		}
		break
	}
	chat.MarkFinal(t)
	for _, p := range t.Link() {
		m.notes = append(m.notes, p.String())
	}
}

// spanTree is the tree of the trace's spans as the trace keeps it (see
// trace.Span), in the order received; nil beyond trace.MaxTreeSpans.
func spanTree(tr *tree) []trace.Span {
	if len(tr.spans) > trace.MaxTreeSpans {
		return nil
	}
	out := make([]trace.Span, 0, len(tr.spans))
	for _, s := range tr.spans {
		sp := trace.Span{ID: s.SpanID.String(), Name: s.Name, Start: s.Start, End: s.End, Failed: s.Failed}
		if !s.ParentID.IsEmpty() {
			sp.Parent = s.ParentID.String()
		}
		out = append(out, sp)
	}
	return out
}
