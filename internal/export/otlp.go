package export

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/faultline/faultline/trace"
)

// EventName is the OpenTelemetry GenAI semantic conventions' event for the
// result of evaluating GenAI output.
const EventName = "gen_ai.evaluation.result"

// scopeName names faultline as the instrumentation scope of what it writes.
const scopeName = "github.com/faultline/faultline/internal/export"

// otlp writes one OTLP/JSON document a line, one per trace with findings:
// LogsData (signal "logs": each finding a log record named
// gen_ai.evaluation.result, as the conventions define events) or TracesData
// (signal "spans": each finding a zero-length span under the span it is
// about, carrying the same attributes and the event as a span event, since
// Phoenix and Langfuse take traces only). The trace id is the trace's OTLP
// id when it came from OpenTelemetry, the span id that of the first step the
// finding cites (the root span when it cites none); for traces of other
// formats both are derived from faultline's ids, the same every time.
type otlp struct {
	w     *bufio.Writer
	spans bool
}

func newOTLP(w io.Writer, signal string) (*otlp, error) {
	switch signal {
	case "", "logs":
		return &otlp{w: bufio.NewWriter(w)}, nil
	case "spans":
		return &otlp{w: bufio.NewWriter(w), spans: true}, nil
	}
	return nil, fmt.Errorf("unknown OTLP signal %q (want %s)", signal, strings.Join(Signals, " or "))
}

func (o *otlp) trace(t *trace.Trace) (int, error) {
	if len(t.Findings) == 0 {
		return 0, nil
	}
	var doc []byte
	var err error
	if o.spans {
		doc, err = (&ptrace.JSONMarshaler{}).MarshalTraces(Spans(t, 0))
	} else {
		doc, err = (&plog.JSONMarshaler{}).MarshalLogs(Logs(t))
	}
	if err != nil {
		return 0, err
	}
	o.w.Write(doc)
	if err := o.w.WriteByte('\n'); err != nil {
		return 0, err
	}
	return len(t.Findings), nil
}

// Logs is the OTLP logs document of a trace's findings, as export writes
// it with signal "logs": one resource (service faultline) and one scope,
// holding a log record named gen_ai.evaluation.result a finding.
func Logs(t *trace.Trace) plog.Logs {
	traceID := otelTraceID(t)
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	resource(rl.Resource())
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(scopeName)
	for _, f := range t.Findings {
		spanID, at := evaluated(t, f)
		lr := sl.LogRecords().AppendEmpty()
		lr.SetEventName(EventName)
		lr.SetTraceID(traceID)
		lr.SetSpanID(spanID)
		lr.SetTimestamp(at)
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		attributes(lr.Attributes(), t, f)
	}
	return ld
}

// Spans is the OTLP traces document of a trace's findings, as export
// writes it with signal "spans": one resource and one scope, holding a
// zero-length span a finding, under the span the finding is about, with
// the event as a span event. first is the index of t.Findings[0] among
// the trace's findings, for a caller that sends them a few at a time: a
// finding's span id is derived from it.
func Spans(t *trace.Trace, first int) ptrace.Traces {
	traceID := otelTraceID(t)
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	resource(rs.Resource())
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(scopeName)
	for i, f := range t.Findings {
		parent, at := evaluated(t, f)
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(traceID)
		sp.SetSpanID(derivedSpanID(t.ID + "/finding/" + strconv.Itoa(first+i)))
		sp.SetParentSpanID(parent)
		sp.SetName(EventName)
		sp.SetKind(ptrace.SpanKindInternal)
		sp.SetStartTimestamp(at)
		sp.SetEndTimestamp(at)
		attributes(sp.Attributes(), t, f)
		// Phoenix shows spans of this kind as evaluations.
		sp.Attributes().PutStr("openinference.span.kind", "EVALUATOR")
		ev := sp.Events().AppendEmpty()
		ev.SetName(EventName)
		ev.SetTimestamp(at)
		attributes(ev.Attributes(), t, f)
	}
	return td
}

func (o *otlp) close() error { return o.w.Flush() }

func resource(r pcommon.Resource) {
	r.Attributes().PutStr("service.name", "faultline")
}

// attributes sets the convention's attributes of an evaluation result, then
// faultline's own, which say where the evidence is.
func attributes(a pcommon.Map, t *trace.Trace, f trace.Finding) {
	code, name, _ := modeName(f)
	a.PutStr("gen_ai.evaluation.name", strings.TrimSpace(code+" "+name))
	a.PutStr("gen_ai.evaluation.score.label", string(f.Verdict))
	if f.Confidence > 0 {
		a.PutDouble("gen_ai.evaluation.score.value", f.Confidence)
	}
	explanation := f.Explanation
	if f.Quote != "" {
		explanation = strings.TrimSpace(explanation + "\nEvidence: " + strconv.Quote(f.Quote))
	}
	if explanation != "" {
		a.PutStr("gen_ai.evaluation.explanation", explanation)
	}
	a.PutStr("faultline.trace_id", t.ID)
	a.PutStr("faultline.mode", code)
	a.PutStr("faultline.source", f.Source)
	if f.Detector != "" {
		a.PutStr("faultline.detector", f.Detector)
	}
	if len(f.Steps) > 0 {
		steps := a.PutEmptySlice("faultline.steps")
		for _, s := range f.Steps {
			steps.AppendEmpty().SetInt(int64(s))
		}
	}
	if f.Taxonomy != "" {
		a.PutStr("faultline.taxonomy", f.Taxonomy)
	}
}

// evaluated returns the span a finding is about and when it happened: the
// first cited step's, else the run's root and its end.
func evaluated(t *trace.Trace, f trace.Finding) (pcommon.SpanID, pcommon.Timestamp) {
	at := t.Ended
	if len(f.Steps) > 0 {
		if s := t.Step(f.Steps[0]); s != nil {
			if !s.Time.IsZero() {
				at = s.Time
			}
			if id, ok := parseSpanID(s.SpanID); ok {
				return id, timestamp(at)
			}
			return derivedSpanID(t.ID + "/step/" + strconv.Itoa(s.Index)), timestamp(at)
		}
	}
	if id, ok := parseSpanID(t.Meta["otel.root_span_id"]); ok {
		return id, timestamp(at)
	}
	return derivedSpanID(t.ID + "/root"), timestamp(at)
}

func timestamp(t time.Time) pcommon.Timestamp {
	if t.IsZero() {
		return 0
	}
	return pcommon.NewTimestampFromTime(t)
}

// otelTraceID is the trace's OTLP id, or one derived from its faultline id.
func otelTraceID(t *trace.Trace) pcommon.TraceID {
	var id pcommon.TraceID
	if b, err := hex.DecodeString(t.Meta["otel.trace_id"]); err == nil && len(b) == len(id) {
		copy(id[:], b)
		return id
	}
	sum := sha256.Sum256([]byte("faultline trace " + t.ID))
	copy(id[:], sum[:])
	return id
}

func parseSpanID(s string) (pcommon.SpanID, bool) {
	var id pcommon.SpanID
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(id) {
		return id, false
	}
	copy(id[:], b)
	return id, true
}

func derivedSpanID(key string) pcommon.SpanID {
	var id pcommon.SpanID
	sum := sha256.Sum256([]byte("faultline span " + key))
	copy(id[:], sum[:])
	return id
}
