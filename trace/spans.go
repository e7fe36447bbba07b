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
	size := 2
	for i := range spans {
		size += len(spans[i].ID) + len(spans[i].Parent) + len(spans[i].Name) + 130 // keys, quotes and two times
	}
	b, ok := appendPlainSpans(make([]byte, 0, size), spans)
	if !ok {
		var err error
		if b, err = json.Marshal(spans); err != nil {
			return // a time beyond year 9999, say: the tree only helps show the trace
		}
	}
	t.SetMeta(SpanTreeMeta, string(b))
}

// appendPlainSpans writes spans as json.Marshal does, when every id and
// name is ASCII that encoding/json writes as it is and every time is in
// UTC within the years it can write (as spans' times are): encoding/json
// reflected on each field and time, a tenth of mapping a received trace.
// ok is false for any other span.
func appendPlainSpans(b []byte, spans []Span) (_ []byte, ok bool) {
	b = append(b, '[')
	for i := range spans {
		s := &spans[i]
		if !plainJSONText(s.ID) || !plainJSONText(s.Parent) || !plainJSONText(s.Name) || !plainJSONTime(s.Start) || !plainJSONTime(s.End) {
			return nil, false
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(b, `{"id":"`...), s.ID...)
		if s.Parent != "" {
			b = append(append(b, `","parent":"`...), s.Parent...)
		}
		b = append(append(b, `","name":"`...), s.Name...)
		b = s.Start.AppendFormat(append(b, `","start":"`...), time.RFC3339Nano)
		b = s.End.AppendFormat(append(b, `","end":"`...), time.RFC3339Nano)
		b = append(b, '"')
		if s.Failed {
			b = append(b, `,"failed":true`...)
		}
		b = append(b, '}')
	}
	return append(b, ']'), true
}

// plainJSONText reports whether encoding/json writes s as it is between
// quotes: printable ASCII but for the quote, the backslash and the three
// characters it escapes for HTML.
func plainJSONText(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// plainJSONTime reports whether time.Time's MarshalJSON writes t as its
// RFC 3339 form with nanoseconds: a time in UTC of a year it can write.
func plainJSONTime(t time.Time) bool {
	return t.Location() == time.UTC && t.Year() >= 0 && t.Year() <= 9999
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
