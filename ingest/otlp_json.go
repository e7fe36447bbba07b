package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/faultline/faultline/ingest/otel"
	"github.com/faultline/faultline/trace"
)

// OTLPJSON decodes OpenTelemetry traces in OTLP/JSON: one TracesData (or
// ExportTraceServiceRequest, the same shape) per line, as the collector's
// file exporter writes them, or a single document, pretty-printed or not.
// The JSON itself is read by the collector's pdata, which knows OTLP/JSON's
// hex ids and int64-as-string rules.
type OTLPJSON struct{}

// Name implements Format.
func (OTLPJSON) Name() string { return "otlp-json" }

// Sniff accepts a JSON object whose top-level keys include resourceSpans.
func (OTLPJSON) Sniff(head []byte) bool {
	if FirstByte(head) != '{' {
		return false
	}
	keys := jsonKeys(head, 1)
	_, camel := keys["resourceSpans"]
	_, snake := keys["resource_spans"]
	return camel || snake
}

// Decode implements Format. Each record (a line, or the one document) is
// unmarshalled whole; when that fails, its spans are unmarshalled one by one
// so that one bad span loses only itself. Traces are emitted at the end,
// since any record may add spans to any trace.
func (OTLPJSON) Decode(ctx context.Context, in *Input, emit func(*trace.Trace) error) error {
	c := newOTelCollector()
	emit = in.limited(emit)
	lr := in.jsonLines()
	var pending []byte // the first line, when it is not a whole record
	pendingLine := 0
	for {
		line, n, err := lr.nextContent(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		valid := json.Valid(line)
		switch {
		case pendingLine == 0 && !valid && c.records == 0:
			pending, pendingLine = bytes.Clone(line), n
			continue
		case pendingLine > 0 && !valid:
			// Neither line is a record of its own: one document spread over
			// lines. pdata needs it whole.
			rest, err := io.ReadAll(lr.br)
			if err != nil {
				return err
			}
			doc := bytes.Repeat([]byte{'\n'}, pendingLine-1)
			doc = append(append(doc, pending...), '\n')
			doc = append(append(doc, bytes.Repeat([]byte{'\n'}, n-pendingLine-1)...), line...)
			doc = append(append(doc, '\n'), rest...)
			otlpJSONDocuments(in, doc, c)
			return c.emit(in, OTLPJSON{}.Name(), emit)
		case pendingLine > 0:
			// One record per line, and the first one is broken.
			otlpJSONInvalid(in, pending, pendingLine, c)
			pending, pendingLine = nil, -1
		}
		if !valid {
			otlpJSONInvalid(in, line, n, c)
			continue
		}
		otlpJSONRecord(in, line, n, c)
	}
	if pendingLine > 0 {
		otlpJSONInvalid(in, pending, pendingLine, c)
	}
	return c.emit(in, OTLPJSON{}.Name(), emit)
}

// otlpJSONDocuments reads the JSON values of doc one after the other,
// locating each by the line it starts on.
func otlpJSONDocuments(in *Input, doc []byte, c *otelCollector) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return
		}
		end := int(dec.InputOffset())
		if err != nil {
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				end = int(syn.Offset)
			}
			in.Report(lineAt(doc, end), Error, "not valid JSON (%s); the rest of the file is skipped", jsonErrorText(err))
			return
		}
		otlpJSONRecord(in, raw, lineAt(doc, end-len(raw)), c)
	}
}

func lineAt(doc []byte, offset int) int {
	offset = min(max(offset, 0), len(doc))
	return bytes.Count(doc[:offset], []byte{'\n'}) + 1
}

// otlpJSONInvalid reports a record that is not JSON at all.
func otlpJSONInvalid(in *Input, raw []byte, line int, c *otelCollector) {
	c.records++
	in.Report(line, Error, "not valid JSON (%s); record skipped", jsonErrorText(json.Unmarshal(raw, new(any))))
}

// otlpJSONRecord reads one record of valid JSON.
func otlpJSONRecord(in *Input, raw []byte, line int, c *otelCollector) {
	c.records++
	bad := func(where string, err error) { in.Report(line, Error, "%s: %v; span skipped", where, err) }
	var u ptrace.JSONUnmarshaler
	td, err := u.UnmarshalTraces(raw)
	if err == nil {
		if td.SpanCount() == 0 {
			in.Report(line, Notice, "no spans in this record (not OTLP traces?)")
		}
		c.add(otel.Spans(td, bad), line)
		return
	}
	// Find the spans that fail and keep the others: each span is unmarshalled
	// alone, inside a copy of its resource and scope.
	var doc otlpJSONSkeleton
	if jerr := json.Unmarshal(raw, &doc); jerr != nil {
		in.Report(line, Error, "not OTLP traces (%v); record skipped", err)
		return
	}
	for i, rs := range doc.resourceSpans() {
		for j, ss := range rs.scopeSpans() {
			for k, span := range ss.Spans {
				one := otlpJSONSkeleton{ResourceSpans: []otlpJSONResourceSpans{{Resource: rs.Resource, SchemaURL: rs.SchemaURL,
					ScopeSpans: []otlpJSONScopeSpans{{Scope: ss.Scope, SchemaURL: ss.SchemaURL, Spans: []json.RawMessage{span}}}}}}
				b, _ := json.Marshal(one)
				td, err := u.UnmarshalTraces(b)
				where := fmt.Sprintf("resourceSpans[%d].scopeSpans[%d].spans[%d]", i, j, k)
				if err != nil {
					bad(where, err)
					continue
				}
				c.add(otel.Spans(td, func(_ string, err error) { bad(where, err) }), line)
			}
		}
	}
}

// otlpJSONSkeleton is OTLP/JSON cut at the spans, to unmarshal each span on
// its own when the whole does not unmarshal. Both spellings of the field
// names are read, as pdata reads them.
type otlpJSONSkeleton struct {
	ResourceSpans      []otlpJSONResourceSpans `json:"resourceSpans,omitempty"`
	ResourceSpansSnake []otlpJSONResourceSpans `json:"resource_spans,omitempty"`
}

type otlpJSONResourceSpans struct {
	Resource        json.RawMessage      `json:"resource,omitempty"`
	ScopeSpans      []otlpJSONScopeSpans `json:"scopeSpans,omitempty"`
	ScopeSpansSnake []otlpJSONScopeSpans `json:"scope_spans,omitempty"`
	SchemaURL       string               `json:"schemaUrl,omitempty"`
}

type otlpJSONScopeSpans struct {
	Scope     json.RawMessage   `json:"scope,omitempty"`
	Spans     []json.RawMessage `json:"spans,omitempty"`
	SchemaURL string            `json:"schemaUrl,omitempty"`
}

func (d otlpJSONSkeleton) resourceSpans() []otlpJSONResourceSpans {
	return append(d.ResourceSpans, d.ResourceSpansSnake...)
}

func (r otlpJSONResourceSpans) scopeSpans() []otlpJSONScopeSpans {
	return append(r.ScopeSpans, r.ScopeSpansSnake...)
}
