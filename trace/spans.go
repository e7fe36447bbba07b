package trace

import (
	"encoding/json"
	"time"
)

// SpanTreeMeta is the meta key under which a trace read from OpenTelemetry
// keeps the tree of its spans (JSON, see Span): a step records the span it
// came from, and the tree says how the spans nest, with their own times,
// including the spans that wrote no step (an HTTP call under a tool, say).
const SpanTreeMeta = "otel.span_tree"

// MaxTreeSpans is the most spans a trace keeps the tree of: beyond it the
// tree would weigh more than the steps, and is left out.
const MaxTreeSpans = 2000

// Span is one span of a trace's tree, as much of it as showing the tree
// needs.
type Span struct {
	ID     string    `json:"id"`
	Parent string    `json:"parent,omitempty"` // "" for a root
	Name   string    `json:"name"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	Failed bool      `json:"failed,omitempty"`
}

// SetSpans keeps the tree of the trace's spans in its meta; a tree of more
// than MaxTreeSpans spans is not kept.
func (t *Trace) SetSpans(spans []Span) {
	if len(spans) == 0 || len(spans) > MaxTreeSpans {
		return
	}
	b, err := json.Marshal(spans)
	if err != nil {
		return // a Span always marshals
	}
	t.SetMeta(SpanTreeMeta, string(b))
}

// Spans returns the tree of the trace's spans kept by SetSpans, nil when
// the trace has none (or it cannot be read: the tree only helps show the
// trace).
func (t *Trace) Spans() []Span {
	text := t.Meta[SpanTreeMeta]
	if text == "" {
		return nil
	}
	var spans []Span
	if err := json.Unmarshal([]byte(text), &spans); err != nil {
		return nil
	}
	return spans
}
