// Package ingest reads agent traces from the formats people have and turns
// them into trace.Trace values. Each format lives in its own file and offers
// Sniff (does this content look like me?) and Decode (stream the traces). The
// format of a file is always chosen by its content, never by its name.
package ingest

import (
	"context"
	"fmt"
	"io"

	"github.com/faultline/faultline/trace"
)

// Format is one trace format.
type Format interface {
	// Name is the format's stable identifier, stored with every trace.
	Name() string
	// Sniff reports whether head, the first bytes of a file (up to SniffSize),
	// looks like this format.
	Sniff(head []byte) bool
	// Decode streams the traces in r to emit. Problems with single records
	// are reported through in.Report and decoding goes on; only I/O failures
	// and an emit error stop it. No text of a trace emitted is longer than
	// the text limit (see DefaultTextLimit).
	Decode(ctx context.Context, in *Input, emit func(*trace.Trace) error) error
}

// SniffSize is how much of a file formats get to look at.
const SniffSize = 64 << 10

// Input is one file being decoded.
type Input struct {
	Path   string
	R      io.Reader
	report func(Issue)
	// limit is the text limit (Options.TextLimit): 0 for DefaultTextLimit,
	// negative for none.
	limit int
	// size is the length of the content when it is known to be that short
	// (a file read whole with its head), 0 otherwise.
	size int
}

// Report records a problem at a location in the file.
func (in *Input) Report(line int, severity Severity, format string, args ...any) {
	in.report(Issue{Path: in.Path, Line: line, Severity: severity, Message: fmt.Sprintf(format, args...)})
}

// Severity separates what went wrong from what is merely worth knowing.
type Severity int

const (
	// Notice is information: an empty session, a skipped file.
	Notice Severity = iota
	// Error means data was lost or damaged: a line that does not parse.
	Error
)

func (s Severity) String() string {
	if s == Error {
		return "error"
	}
	return "notice"
}

// Issue is a problem found while reading a file, with its location.
type Issue struct {
	Path     string   `json:"path"`
	Line     int      `json:"line,omitempty"` // 0 when the problem is about the whole file
	Severity Severity `json:"-"`
	Message  string   `json:"message"`
}

func (i Issue) String() string {
	if i.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", i.Path, i.Line, i.Message)
	}
	return fmt.Sprintf("%s: %s", i.Path, i.Message)
}

// Formats lists every format in the order they are sniffed. More specific
// formats come first.
var Formats = []Format{Codex{}, MAD{}, OTLPJSON{}, OTLPProto{}, InspectAI{}, WhoWhen{}, TauBench{}, ATIF{}, Docent{}, MagenticOne{}, OpenAIChat{}}

// Lookup returns the format with the given name.
func Lookup(name string) (Format, bool) {
	for _, f := range Formats {
		if f.Name() == name {
			return f, true
		}
	}
	return nil, false
}

// Detect returns the first format whose Sniff accepts head.
func Detect(head []byte) (Format, bool) {
	for _, f := range Formats {
		if f.Sniff(head) {
			return f, true
		}
	}
	return nil, false
}
