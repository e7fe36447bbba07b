package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/faultline/faultline/internal/jsonscan"
)

// Streaming helpers for formats whose files are JSON documents rather than
// JSON Lines: a filter that makes Python's json output readable by Go, a
// reader that turns byte offsets back into line numbers, and a record
// iterator that walks a top-level array one element at a time. Together they
// keep memory proportional to the largest record, not to the file.

// bareTokens are the non-standard number literals Python's json module
// writes for float('nan') and the infinities. Go's decoder rejects them.
var bareTokens = [...]string{"NaN", "Infinity", "-Infinity"}

// maxBareToken is the length of the longest bare token.
const maxBareToken = len("-Infinity")

// nanFilter is an io.Reader that replaces the bare tokens NaN, Infinity and
// -Infinity outside JSON strings with null. It tracks whether it is inside a
// string (and after a backslash) across Read calls, and holds back a
// possible token cut by a Read boundary until the next bytes decide it, so
// the result does not depend on how the input is chunked. Text inside
// strings is never touched.
type nanFilter struct {
	pushReader
	pending  []byte // a prefix of a bare token seen outside strings
	inString bool
	escaped  bool
}

func newNaNFilter(r io.Reader) *nanFilter {
	f := &nanFilter{}
	f.pushReader = pushReader{r: r, in: make([]byte, 32<<10), write: f.process, end: func() {
		// A token cut off by the end of input is not a token: keep it as it was.
		f.out = append(f.out, f.pending...)
		f.pending = f.pending[:0]
	}}
	return f
}

// pushReader is an io.Reader that filters what it reads from r: write
// takes each chunk read and appends what it makes of it to out; end, at
// the end of the input, appends what it held back.
type pushReader struct {
	r     io.Reader
	in    []byte // scratch buffer for reads from r
	out   []byte // filtered bytes; out[off:] are not yet returned
	off   int
	err   error
	write func([]byte)
	end   func()
}

// Read implements io.Reader.
func (f *pushReader) Read(p []byte) (int, error) {
	for f.off == len(f.out) && f.err == nil {
		f.out, f.off = f.out[:0], 0
		n, err := f.r.Read(f.in)
		f.write(f.in[:n])
		if err != nil {
			f.end()
			f.err = err
		}
	}
	n := copy(p, f.out[f.off:])
	f.off += n
	if f.off == len(f.out) {
		return n, f.err
	}
	return n, nil
}

// process filters a chunk, copying the runs between bytes that matter in
// the current state in one go.
func (f *nanFilter) process(b []byte) {
	for len(b) > 0 {
		if len(f.pending) > 0 || f.escaped {
			f.feed(b[0])
			b = b[1:]
			continue
		}
		special := `"NI-`
		if f.inString {
			special = `"\`
		}
		i := bytes.IndexAny(b, special)
		if i < 0 {
			f.out = append(f.out, b...)
			return
		}
		f.out = append(f.out, b[:i]...)
		f.feed(b[i])
		b = b[i+1:]
	}
}

// feed filters one input byte.
func (f *nanFilter) feed(c byte) {
	if f.inString {
		switch {
		case f.escaped:
			f.escaped = false
		case c == '\\':
			f.escaped = true
		case c == '"':
			f.inString = false
		}
		f.out = append(f.out, c)
		return
	}
	if len(f.pending) == 0 && c != 'N' && c != 'I' && c != '-' {
		if c == '"' {
			f.inString = true
		}
		f.out = append(f.out, c)
		return
	}
	f.pending = append(f.pending, c)
	full, prefix := matchBareToken(f.pending)
	switch {
	case full:
		f.out = append(f.out, "null"...)
		f.pending = f.pending[:0]
	case prefix:
		// Wait for the bytes that decide it.
	default:
		// The held bytes are not a token. The first one is output as it is;
		// the rest may still begin one (as "N" does in "-NaN"), so they are
		// fed again. The copy is needed because feed appends to pending.
		var rest [maxBareToken]byte
		n := copy(rest[:], f.pending[1:])
		f.out = append(f.out, f.pending[0])
		f.pending = f.pending[:0]
		for _, b := range rest[:n] {
			f.feed(b)
		}
	}
}

// matchBareToken reports whether b is a whole bare token, or a proper
// prefix of one.
func matchBareToken(b []byte) (full, prefix bool) {
	for _, tok := range bareTokens {
		if len(b) <= len(tok) && string(b) == tok[:len(b)] {
			if len(b) == len(tok) {
				return true, false
			}
			prefix = true
		}
	}
	return false, prefix
}

// sanitizeJSON applies the NaN filter to a complete document in memory, for
// JSON nested inside a string field.
func sanitizeJSON(b []byte) []byte {
	if !bytes.Contains(b, []byte("NaN")) && !bytes.Contains(b, []byte("Infinity")) {
		return b
	}
	out, _ := io.ReadAll(newNaNFilter(bytes.NewReader(b))) // a bytes.Reader cannot fail
	return out
}

// closeCutString makes a prefix of a JSON document that ends inside a string
// end that string instead, so a tokenizer sees the key whose value was cut
// off. An escape sequence cut short is dropped, since closing the string
// after it would be a syntax error. It returns head unchanged when head does
// not end inside a string.
func closeCutString(head []byte) []byte {
	inString, escaped := false, false
	escape := -1 // where the last escape sequence began
	for i, c := range head {
		switch {
		case !inString:
			inString = c == '"'
		case escaped:
			escaped = false
		case c == '\\':
			escaped, escape = true, i
		case c == '"':
			inString = false
		}
	}
	if !inString {
		return head
	}
	end := len(head)
	if escape >= 0 && (escaped || head[escape+1] == 'u' && end-escape < len(`\u0000`)) {
		end = escape
	}
	out := make([]byte, 0, end+1)
	out = append(out, head[:end]...)
	return append(out, '"')
}

// lineIndex is an io.Reader that remembers where the newlines of its input
// are, so that a byte offset reported by a decoder reading through it can be
// turned into a line number. It keeps only the newlines after the last
// offset asked about: callers must ask about offsets in increasing order.
type lineIndex struct {
	r        io.Reader
	read     int64   // bytes read so far
	newlines []int64 // offsets of the newlines not yet passed by a query
	passed   int     // newlines before the last queried offset
}

func newLineIndex(r io.Reader) *lineIndex { return &lineIndex{r: r} }

// Read implements io.Reader.
func (l *lineIndex) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for i := 0; i < n; {
		j := bytes.IndexByte(p[i:n], '\n')
		if j < 0 {
			break
		}
		l.newlines = append(l.newlines, l.read+int64(i+j))
		i += j + 1
	}
	l.read += int64(n)
	return n, err
}

// Line returns the 1-based line of the byte at offset. An offset before one
// asked about earlier gets the line of that earlier offset.
func (l *lineIndex) Line(offset int64) int {
	k := sort.Search(len(l.newlines), func(i int) bool { return l.newlines[i] >= offset })
	l.passed += k
	l.newlines = l.newlines[k:]
	return l.passed + 1
}

// jsonRecords walks the records of a JSON document: the elements of a
// top-level array, or each top-level value when a file holds one object or
// several values back to back (JSON Lines). Bare NaN and infinities are read
// as null. Each record is returned raw so that a record of the wrong shape
// can be reported and skipped without losing the others.
type jsonRecords struct {
	lines *lineIndex
	// where names the JSON value being read, when the reader knows (see
	// clipReader.Where); "" otherwise.
	where   func() string
	dec     *json.Decoder
	base    int64 // bytes skipped before the decoder's input (a byte-order mark)
	inArray bool
	done    bool
}

func newJSONRecords(r io.Reader) *jsonRecords {
	// Lines are counted after the filter, where the decoder's offsets are;
	// the filter keeps every newline, so the lines are the file's.
	lines := newLineIndex(newNaNFilter(r))
	br := bufio.NewReaderSize(lines, 64<<10)
	var base int64
	if bom, err := br.Peek(3); err == nil && string(bom) == "\xef\xbb\xbf" {
		_, _ = br.Discard(3) // the peeked bytes are buffered, so this cannot fail
		base = 3
	}
	dec := json.NewDecoder(br)
	s := &jsonRecords{lines: lines, dec: dec, base: base, where: func() string { return "" }}
	if cr, ok := r.(*clipReader); ok {
		s.where = cr.Where
	}
	return s
}

// jsonStreamError is a defect of the document that stops reading it: a
// syntax error or a truncated file.
type jsonStreamError struct {
	Line int
	Msg  string
	// Offset is the byte where the document breaks (in the text as read,
	// its long strings cut); Where the JSON path being read when it ended,
	// on a truncated document, or "".
	Offset int64
	Where  string
	// Truncated tells a document cut short from a syntax error.
	Truncated bool
}

func (e *jsonStreamError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Next returns the next record and the line it starts on. It returns io.EOF
// after the last record, a *jsonStreamError when the document is broken
// (nothing more can be read from it), and any other error from the
// underlying reader as it is.
func (s *jsonRecords) Next() (json.RawMessage, int, error) {
	for !s.done {
		if s.inArray {
			if s.dec.More() {
				return s.value()
			}
			// More is false before the closing bracket and on errors; Token
			// consumes the one and reports the others.
			_, err := s.dec.Token()
			if errors.Is(err, io.EOF) {
				return nil, 0, s.truncated("the top-level array is not closed")
			}
			if err != nil {
				return nil, 0, s.fail(err)
			}
			s.inArray = false
			continue
		}
		if !s.dec.More() {
			// At the top level More is false at the end of input, on errors
			// and on a stray closing bracket, which Token reports.
			_, err := s.dec.Token()
			if errors.Is(err, io.EOF) {
				s.done = true
				break
			}
			return nil, 0, s.fail(err)
		}
		if s.peek() != '[' {
			return s.value()
		}
		if _, err := s.dec.Token(); err != nil {
			return nil, 0, s.fail(err)
		}
		s.inArray = true
	}
	return nil, 0, io.EOF
}

// peek returns the next non-space byte, which More has just buffered.
func (s *jsonRecords) peek() byte {
	var c [1]byte
	buffered := s.dec.Buffered()
	for {
		if n, _ := buffered.Read(c[:]); n == 0 || !jsonscan.IsSpace(c[0]) {
			return c[0]
		}
	}
}

// value decodes one record.
func (s *jsonRecords) value() (json.RawMessage, int, error) {
	var raw json.RawMessage
	if err := s.dec.Decode(&raw); err != nil {
		return nil, 0, s.fail(err)
	}
	start := s.base + s.dec.InputOffset() - int64(len(raw))
	return raw, s.lines.Line(start), nil
}

// fail stops the iteration on err, turning a defect of the document into a
// *jsonStreamError at the line where it breaks. Errors of the underlying
// reader are returned unchanged.
func (s *jsonRecords) fail(err error) error {
	s.done = true
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		// The error's own offset is not the document's (see syntaxErrorOffset).
		off := s.syntaxErrorOffset()
		return &jsonStreamError{Line: s.lines.Line(off), Offset: off, Msg: "invalid JSON: " + syn.Error()}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		// The end of the input inside a value, or where one was due (after
		// a key): either way the document is cut short.
		return s.truncated("the file ends inside a record")
	}
	return err
}

// truncated reports a document cut short, at its last line.
func (s *jsonRecords) truncated(what string) error {
	s.done = true
	end := s.lines.read
	if end > 0 {
		end-- // the last byte, so that a final newline does not start a line
	}
	return &jsonStreamError{Line: s.lines.Line(end), Offset: s.lines.read, Where: s.where(), Truncated: true, Msg: "truncated JSON: " + what}
}

// syntaxErrorOffset locates a syntax error in the document. The decoder's
// own offsets count only the bytes its value scanner has seen, not those
// Token consumed, so the failed value is scanned again from where it starts,
// which the decoder still holds in its buffer.
func (s *jsonRecords) syntaxErrorOffset() int64 {
	start := s.base + s.dec.InputOffset()
	b, _ := io.ReadAll(s.dec.Buffered()) // a bytes.Reader cannot fail
	var raw json.RawMessage
	var syn *json.SyntaxError
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&raw); errors.As(err, &syn) && syn.Offset > 0 {
		return start + syn.Offset - 1 // Offset counts the offending byte
	}
	return start
}
