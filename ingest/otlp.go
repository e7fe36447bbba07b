package ingest

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/faultline/faultline/ingest/otel"
	"github.com/faultline/faultline/trace"
)

// The otlp-json and otlp-proto formats read OpenTelemetry traces from files;
// what the spans become is package otel's, which the receiver shares. What
// is theirs alone is here: gathering a file's spans by trace before mapping.

// otelCollector groups the spans of a file by trace id, remembering where
// each trace was first seen, since a trace's spans may be spread over many
// records (the collector's file exporter writes one batch per line).
type otelCollector struct {
	records int // records read, spans or not
	order   []pcommon.TraceID
	spans   map[pcommon.TraceID][]otel.Span
	line    map[pcommon.TraceID]int
}

func newOTelCollector() *otelCollector {
	return &otelCollector{spans: map[pcommon.TraceID][]otel.Span{}, line: map[pcommon.TraceID]int{}}
}

func (c *otelCollector) add(spans []otel.Span, line int) {
	for _, s := range spans {
		if _, ok := c.spans[s.TraceID]; !ok {
			c.order = append(c.order, s.TraceID)
			c.line[s.TraceID] = line
		}
		c.spans[s.TraceID] = append(c.spans[s.TraceID], s)
	}
}

// emit maps and emits every trace, in the order they were first seen.
func (c *otelCollector) emit(in *Input, format string, emit func(*trace.Trace) error) error {
	for _, id := range c.order {
		t, notes := otel.Trace(c.spans[id], format, in.Path)
		delete(c.spans, id)
		for _, n := range notes {
			in.Report(c.line[id], Notice, "trace %s: %s", id, n)
		}
		if t == nil {
			continue
		}
		if err := emit(t); err != nil {
			return err
		}
	}
	return nil
}
