package otel

import (
	"testing"

	"github.com/faultline/faultline/internal/receive/receivetest"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// BenchmarkTrace maps the receiver benchmark's runs (10 spans of a small
// agent each: a root, 5 chat calls whose conversation grows, 4 tool calls)
// from their spans to traces, as the receiver does once a run is
// assembled. It reports spans per second; -benchmem the allocations per
// request of 100 spans.
func BenchmarkTrace(b *testing.B) {
	td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(receivetest.Request(receivetest.Template(), 0))
	if err != nil {
		b.Fatal(err)
	}
	runs := map[pcommon.TraceID][]Span{}
	for _, s := range Spans(td, func(where string, err error) { b.Fatal(where, err) }) {
		runs[s.TraceID] = append(runs[s.TraceID], s)
	}
	if len(runs) != receivetest.RunsPerRequest {
		b.Fatalf("%d runs, want %d", len(runs), receivetest.RunsPerRequest)
	}
	for b.Loop() {
		for _, spans := range runs {
			if t, notes := Trace(spans, "otel", ""); t == nil {
				b.Fatal(notes)
			}
		}
	}
	b.ReportMetric(float64(b.N*receivetest.RunsPerRequest*receivetest.SpansPerRun)/b.Elapsed().Seconds(), "spans/s")
}
