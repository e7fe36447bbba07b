// Package oteltest renders a trace mapped from OpenTelemetry spans for
// tests to compare, so that the tests of package otel (the mapping) and of
// ingest (the OTLP formats that feed it) state what a trace should be in one
// notation.
package oteltest

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/trace"
)

// Steps renders steps one a line, for comparing with what a sample should
// give.
func Steps(tr *trace.Trace) string {
	var b strings.Builder
	for _, s := range tr.Steps {
		fmt.Fprintf(&b, "%d %s %s", s.Index, s.Kind, s.Role)
		if s.Agent != "" {
			fmt.Fprintf(&b, " @%s", s.Agent)
		}
		if s.Tool != "" {
			fmt.Fprintf(&b, " %s(%s)", s.Tool, s.Args)
		}
		if s.CallID != "" {
			fmt.Fprintf(&b, " #%s", s.CallID)
		}
		if s.IsError {
			b.WriteString(" !")
		}
		if s.Tokens > 0 {
			fmt.Fprintf(&b, " tokens=%d", s.Tokens)
		}
		fmt.Fprintf(&b, " [%s] %s\n", s.SpanID, trace.Clip(s.Text, 50))
	}
	return b.String()
}
