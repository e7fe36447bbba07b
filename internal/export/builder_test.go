package export

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The builders make the documents export writes, and findings sent a few
// at a time get the span ids they have among the trace's findings.
func TestExportBuilders(t *testing.T) {
	tr := cohort()[0]
	lines := strings.Split(strings.TrimSpace(export(t, "otlp", Options{})), "\n")
	logs, err := (&plog.JSONMarshaler{}).MarshalLogs(Logs(tr))
	if err != nil || string(logs) != lines[0] {
		t.Errorf("Logs: %s (%v), want what export writes: %s", logs, err, lines[0])
	}
	whole := Spans(tr, 0).ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	tail := *tr
	tail.Findings = tr.Findings[2:]
	part := Spans(&tail, 2).ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	if part.Len() != 2 || part.At(0).SpanID() != whole.At(2).SpanID() || part.At(1).SpanID() != whole.At(3).SpanID() {
		t.Errorf("spans of findings 2 and on: ids differ from the whole trace's")
	}
	spans, err := (&ptrace.JSONMarshaler{}).MarshalTraces(Spans(tr, 0))
	if want := strings.Split(strings.TrimSpace(export(t, "otlp", Options{Signal: "spans"})), "\n")[0]; err != nil || string(spans) != want {
		t.Errorf("Spans: %s (%v), want what export writes: %s", spans, err, want)
	}
}
