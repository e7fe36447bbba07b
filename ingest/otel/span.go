package otel

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Span is a span reduced to what the mapping reads: ids, times, status,
// and the attributes and events of the vocabularies of the package doc.
// Every other attribute (HTTP, database, host) is dropped as the span is
// read, so a trace held open by the receiver costs only what will be mapped.
type Span struct {
	TraceID    pcommon.TraceID
	SpanID     pcommon.SpanID
	ParentID   pcommon.SpanID
	Name       string
	Start, End time.Time
	Failed     bool   // status code ERROR
	Status     string // the status message
	Service    string // the resource's service.name
	Attrs      map[string]string
	Events     []Event
}

// Event is a span event of the GenAI vocabularies or an exception.
type Event struct {
	Name  string
	Time  time.Time
	Attrs map[string]string
}

// Size estimates the memory a span holds, for the receiver's limits: its
// text, plus overheads (the struct, map buckets, string headers) measured by
// the receiver's BenchmarkOpenTraceMemory and rounded up.
func (s *Span) Size() int {
	n := 400 + len(s.Name) + len(s.Status) + len(s.Service)
	for k, v := range s.Attrs {
		n += 80 + len(k) + len(v)
	}
	for _, e := range s.Events {
		n += 120 + len(e.Name)
		for k, v := range e.Attrs {
			n += 80 + len(k) + len(v)
		}
	}
	return n
}

// keptPrefixes are the attribute prefixes the mapping reads.
var keptPrefixes = []string{"gen_ai.", "llm.", "tool.", "tool_call.", "input.", "output.", "openinference.",
	"traceloop.", "agent.", "session.", "error.", "exception."}

func keepAttr(key string) bool {
	for _, p := range keptPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// Spans flattens td into spans. A span without a trace or span id cannot
// be placed in a trace: it is reported through bad with its position and
// left out.
func Spans(td ptrace.Traces, bad func(where string, err error)) []Span {
	var out []Span
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		service := ""
		if v, ok := rs.Resource().Attributes().Get("service.name"); ok {
			service = v.AsString()
		}
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				if sp.TraceID().IsEmpty() || sp.SpanID().IsEmpty() {
					bad(fmt.Sprintf("resourceSpans[%d].scopeSpans[%d].spans[%d]", i, j, k), fmt.Errorf("span %q has no trace id or span id", sp.Name()))
					continue
				}
				out = append(out, newSpan(sp, service))
			}
		}
	}
	return out
}

func newSpan(sp ptrace.Span, service string) Span {
	s := Span{
		TraceID: sp.TraceID(), SpanID: sp.SpanID(), ParentID: sp.ParentSpanID(),
		Name: sp.Name(), Start: spanTime(sp.StartTimestamp()), End: spanTime(sp.EndTimestamp()),
		Failed: sp.Status().Code() == ptrace.StatusCodeError, Status: sp.Status().Message(),
		Service: service, Attrs: map[string]string{},
	}
	for k, v := range sp.Attributes().All() {
		if keepAttr(k) {
			s.Attrs[k] = v.AsString()
		}
	}
	events := sp.Events()
	for i := 0; i < events.Len(); i++ {
		e := events.At(i)
		if e.Name() != "exception" && !strings.HasPrefix(e.Name(), "gen_ai.") {
			continue
		}
		attrs := make(map[string]string, e.Attributes().Len())
		for k, v := range e.Attributes().All() {
			attrs[k] = v.AsString()
		}
		s.Events = append(s.Events, Event{Name: e.Name(), Time: spanTime(e.Timestamp()), Attrs: attrs})
	}
	return s
}

func spanTime(ts pcommon.Timestamp) time.Time {
	if ts == 0 {
		return time.Time{}
	}
	return ts.AsTime()
}

// firstAttr returns the value of the first of keys that s has.
func firstAttr(s *Span, keys ...string) string {
	for _, k := range keys {
		if v := s.Attrs[k]; v != "" {
			return v
		}
	}
	return ""
}

// attrInt reads the first of keys that holds a plausible positive count
// (token counts arrive as numbers or as strings, ints or floats).
func attrInt(a map[string]string, keys ...string) int {
	for _, k := range keys {
		// An absent key is passed over before it is parsed: the parse's
		// error for "" was an allocation per key per LLM span.
		if s := a[k]; s != "" {
			if v, err := strconv.ParseFloat(s, 64); err == nil && v > 0 && v < 1e12 {
				return int(v)
			}
		}
	}
	return 0
}
