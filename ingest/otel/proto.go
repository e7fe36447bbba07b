package otel

import "encoding/binary"

// Protobuf wire types. Some OTLP protobuf is read and written by hand,
// field by field: ingest's otlp-proto format walks the wire to sniff a file
// and to salvage the good spans of a damaged message, and the receiver
// writes its small responses itself, which spares pdata's ptraceotlp and the
// gRPC stack it imports.
const (
	ProtoVarint  = 0
	ProtoFixed64 = 1
	ProtoLen     = 2
	ProtoFixed32 = 5
)

// ProtoAppendLen appends a length-delimited protobuf field (number num)
// holding payload: the receiver's OTLP responses, and the one-span messages
// ingest's otlp-proto format rebuilds from a damaged one.
func ProtoAppendLen(b []byte, num int, payload []byte) []byte {
	b = binary.AppendUvarint(b, uint64(num)<<3|ProtoLen)
	b = binary.AppendUvarint(b, uint64(len(payload)))
	return append(b, payload...)
}
