package ingest

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/faultline/faultline/ingest/otel"
	"github.com/faultline/faultline/trace"
)

// OTLPProto decodes OpenTelemetry traces in OTLP protobuf: one TracesData
// (or ExportTraceServiceRequest, the same bytes) as an OTLP/HTTP body holds
// it, or the collector's file exporter's stream, where each message is
// preceded by its length as 4 bytes, big-endian.
//
// Protobuf carries no magic number, and almost any bytes decode as
// *something*: unknown fields are skipped and an empty message is valid, so a
// trial unmarshal proves nothing, and it cannot even run on a head cut at
// SniffSize. Sniff instead walks the wire format for positive evidence: a
// span reached as TracesData.resource_spans → ResourceSpans.scope_spans →
// ScopeSpans.spans, where every field seen on the way has the number and
// wire type the OTLP schema gives it, and the span shows at least one field
// that only a Span has in that form (its 16- and 8-byte ids, kind, start or
// end time, status), which also tells traces from OTLP logs and metrics,
// nested the same way. Fields may come in any order (pdata, which the
// collector uses, writes them last to first), and the head may end inside a
// span, so the check reads what is visible and nothing more: a file whose
// first span shows none of those fields within the head is not recognised.
type OTLPProto struct{}

// Name implements Format.
func (OTLPProto) Name() string { return "otlp-proto" }

// Sniff implements Format; see OTLPProto.
func (OTLPProto) Sniff(head []byte) bool {
	_, ok := otlpProtoFraming(head)
	return ok
}

// maxOTLPMessage bounds one framed message; a larger length prefix means
// the stream is damaged.
const maxOTLPMessage = 1 << 30

// otlpProtoFraming tells whether data starts with OTLP protobuf traces, and
// whether they are framed by length prefixes.
func otlpProtoFraming(head []byte) (framed, ok bool) {
	if len(head) > 4 && head[4] == 0x0A {
		if n := binary.BigEndian.Uint32(head); n > 0 && n <= maxOTLPMessage && otlpProtoHasSpan(head[4:min(len(head), 4+int(n))]) {
			return true, true
		}
	}
	return false, len(head) > 0 && head[0] == 0x0A && otlpProtoHasSpan(head)
}

// otlpProtoHasSpan looks for a span through the nesting of TracesData; b
// may be cut anywhere.
func otlpProtoHasSpan(b []byte) bool {
	return protoFind(b, []int{1, 2, 2}, []int{1, 3, 3}, otlpLooksLikeSpan)
}

// otlpSpanWire is the wire type of each field of Span, by number.
var otlpSpanWire = map[int]int{1: otel.ProtoLen, 2: otel.ProtoLen, 3: otel.ProtoLen, 4: otel.ProtoLen, 5: otel.ProtoLen, 6: otel.ProtoVarint,
	7: otel.ProtoFixed64, 8: otel.ProtoFixed64, 9: otel.ProtoLen, 10: otel.ProtoVarint, 11: otel.ProtoLen, 12: otel.ProtoVarint, 13: otel.ProtoLen,
	14: otel.ProtoVarint, 15: otel.ProtoLen, 16: otel.ProtoFixed32}

// otlpLooksLikeSpan reports whether the visible fields of b are those of a
// Span, one of them a field only a Span has in that form.
func otlpLooksLikeSpan(b []byte) bool {
	fits, distinctive := true, false
	malformed := protoEach(b, func(f protoField) bool {
		if want, known := otlpSpanWire[f.num]; !known || f.typ != want {
			fits = false
			return false
		}
		if f.cut {
			return false
		}
		switch f.num {
		case 1, 2:
			fits = len(f.payload) == 16-8*(f.num-1) // trace id 16 bytes, span id 8
			distinctive = true
		case 4:
			fits = len(f.payload) == 0 || len(f.payload) == 8
		case 6, 7, 8, 15:
			distinctive = true
		}
		return fits
	})
	return malformed < 0 && fits && distinctive
}

// protoFind walks the length-delimited fields numbered by path, level by
// level, and reports whether found accepts one of the messages at its end.
// Each level's fields must be length-delimited and numbered at most maxNum
// (its message's schema); it gives up at the first that is not.
func protoFind(b []byte, path, maxNum []int, found func([]byte) bool) bool {
	hit, fits := false, true
	protoEach(b, func(f protoField) bool {
		if f.typ != otel.ProtoLen || f.num > maxNum[0] {
			fits = false
			return false
		}
		if f.num != path[0] {
			return true
		}
		if len(path) == 1 {
			hit = found(f.payload)
		} else {
			hit = protoFind(f.payload, path[1:], maxNum[1:], found)
		}
		return !hit
	})
	return hit && fits
}

// protoField is one field of protobuf wire data. raw is the whole field,
// tag included; cut marks a length-delimited field whose payload runs past
// the end of the data.
type protoField struct {
	num, typ int
	payload  []byte
	raw      []byte
	offset   int
	cut      bool
}

// protoEach calls fn for each field of b until fn returns false. It returns
// the offset of a malformed field (a bad tag, a varint that does not end, a
// group or unknown wire type) that stopped it, or -1; a last field cut short
// by the end of b is passed to fn, marked cut.
func protoEach(b []byte, fn func(protoField) bool) int {
	for off := 0; off < len(b); {
		f, n := protoNext(b[off:])
		if n <= 0 {
			return off
		}
		f.offset = off
		if !fn(f) || f.cut {
			return -1
		}
		off += n
	}
	return -1
}

// protoNext reads the field at the start of b, returning how many bytes it
// takes, or 0 when it is malformed.
func protoNext(b []byte) (protoField, int) {
	tag, n := binary.Uvarint(b)
	if n <= 0 || tag>>3 == 0 || tag>>3 > 1<<29 {
		return protoField{}, 0
	}
	f := protoField{num: int(tag >> 3), typ: int(tag & 7)}
	var size int
	switch f.typ {
	case otel.ProtoVarint:
		_, m := binary.Uvarint(b[n:])
		if m <= 0 {
			return protoField{}, 0
		}
		size = m
	case otel.ProtoFixed64:
		size = 8
	case otel.ProtoFixed32:
		size = 4
	case otel.ProtoLen:
		l, m := binary.Uvarint(b[n:])
		if m <= 0 {
			return protoField{}, 0
		}
		n += m
		if l > uint64(len(b)-n) {
			f.payload, f.raw, f.cut = b[n:], b, true
			return f, len(b)
		}
		size = int(l)
		f.payload = b[n : n+size]
	default:
		return protoField{}, 0
	}
	if size > len(b)-n {
		return protoField{}, 0
	}
	f.raw = b[:n+size]
	return f, n + size
}

// Decode implements Format. Each message is unmarshalled whole; when that
// fails, its spans are unmarshalled one by one, each inside a copy of its
// resource and scope, so one bad span loses only itself.
func (OTLPProto) Decode(ctx context.Context, in *Input, emit func(*trace.Trace) error) error {
	emit = in.limited(emit)
	br := bufio.NewReaderSize(in.R, SniffSize)
	head, _ := br.Peek(SniffSize)
	framed, _ := otlpProtoFraming(head)
	c := newOTelCollector()
	if !framed {
		data, err := io.ReadAll(br)
		if err != nil {
			return err
		}
		otlpProtoMessage(in, data, "", c)
		return c.emit(in, OTLPProto{}.Name(), emit)
	}
	var size [4]byte
	for msg, offset := 1, 0; ; msg++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, err := io.ReadFull(br, size[:])
		if errors.Is(err, io.EOF) {
			break
		}
		where := fmt.Sprintf("message %d (byte %d)", msg, offset)
		n := binary.BigEndian.Uint32(size[:])
		if err == nil && n > maxOTLPMessage {
			err = fmt.Errorf("length %d is not plausible", n)
		}
		var data []byte
		if err == nil {
			// Read what is there rather than allocate what a damaged prefix claims.
			data, err = io.ReadAll(io.LimitReader(br, int64(n)))
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || (err == nil && len(data) < int(n)) {
			err = errors.New("the file ends inside it")
		}
		if err != nil {
			in.Report(0, Error, "%s: %v; the rest of the file is skipped", where, err)
			break
		}
		otlpProtoMessage(in, data, where+": ", c)
		offset += 4 + int(n)
	}
	return c.emit(in, OTLPProto{}.Name(), emit)
}

func otlpProtoMessage(in *Input, data []byte, where string, c *otelCollector) {
	c.records++
	bad := func(at string, err error) { in.Report(0, Error, "%s%s: %v; span skipped", where, at, err) }
	var u ptrace.ProtoUnmarshaler
	td, err := u.UnmarshalTraces(data)
	if err == nil {
		c.add(otel.Spans(td, bad), 0)
		return
	}
	malformed := func(off int) {
		in.Report(0, Error, "%smalformed protobuf at byte %d of the message (%v); the rest of it is skipped", where, off, err)
	}
	i := 0
	if off := protoEach(data, func(rs protoField) bool {
		if rs.num != 1 || rs.typ != otel.ProtoLen {
			return true
		}
		at := fmt.Sprintf("resourceSpans[%d]", i)
		i++
		if rs.cut {
			malformed(rs.offset)
			return false
		}
		if off := otlpProtoResource(rs, at, c, bad); off >= 0 {
			malformed(rs.offset + len(rs.raw) - len(rs.payload) + off)
			return false
		}
		return true
	}); off >= 0 {
		malformed(off)
	}
}

// otlpProtoResource unmarshals the spans of one ResourceSpans one by one. It
// returns the offset in the ResourceSpans of malformed wire data, or -1.
func otlpProtoResource(rs protoField, at string, c *otelCollector, bad func(string, error)) int {
	var resource, schema []byte
	protoEach(rs.payload, func(f protoField) bool {
		switch f.num {
		case 1:
			resource = f.raw
		case 3:
			schema = f.raw
		}
		return true
	})
	j, malformed := 0, -1
	off := protoEach(rs.payload, func(ss protoField) bool {
		if ss.num != 2 || ss.typ != otel.ProtoLen {
			return true
		}
		var scope []byte
		protoEach(ss.payload, func(f protoField) bool {
			if f.num == 1 {
				scope = f.raw
			}
			return true
		})
		k := 0
		off := protoEach(ss.payload, func(span protoField) bool {
			if span.num != 2 || span.typ != otel.ProtoLen {
				return true
			}
			where := fmt.Sprintf("%s.scopeSpans[%d].spans[%d]", at, j, k)
			k++
			scopeSpans := append(append([]byte{}, scope...), span.raw...)
			msg := append(append([]byte{}, resource...), schema...)
			msg = otel.ProtoAppendLen(msg, 2, scopeSpans)
			td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(otel.ProtoAppendLen(nil, 1, msg))
			if err != nil {
				bad(where, err)
				return true
			}
			c.add(otel.Spans(td, func(_ string, err error) { bad(where, err) }), 0)
			return true
		})
		j++
		if off >= 0 {
			malformed = ss.offset + len(ss.raw) - len(ss.payload) + off
		}
		return off < 0
	})
	if off >= 0 {
		return off
	}
	return malformed
}
