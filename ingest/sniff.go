package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/faultline/faultline/ingest/internal/jsontext"
	"github.com/faultline/faultline/internal/jsonscan"
)

// jsonKeys scans the first JSON value in head, which may be cut off anywhere,
// and returns the keys of objects found at the given depth (1: the top-level
// object; 2: objects inside a top-level array or object) with their values
// when those are strings, and "" otherwise. It stops at the first syntax
// error or at the end of head, keeping what it saw: sniffing must work on a
// prefix of a file.
//
// A whole, well-formed value is read in one pass by jsonscan; anything else
// (a head cut short, a key with escapes) by encoding/json's tokens, which
// took a twentieth of an ingest of many small files when every file went
// through them, several times over.
func jsonKeys(head []byte, depth int) map[string]string {
	keys := map[string]string{}
	var s jsonscan.Scanner
	s.Reset(head)
	// A scalar first is read past by the tokens, to the value after it.
	if c := s.Peek(); (c == '{' || c == '[') && scanKeys(&s, 0, depth, keys) {
		return keys
	}
	return tokenKeys(head, depth)
}

// scanKeys reads one value, inside level containers, adding to keys those
// of the objects depth containers deep. It reports false where the value is
// malformed or cut off, or holds what jsonscan leaves to encoding/json.
func scanKeys(s *jsonscan.Scanner, level, depth int, keys map[string]string) bool {
	switch c := s.Peek(); {
	case level >= depth:
		return s.Skip()
	case c == '[':
		return s.Array(func() bool { return scanKeys(s, level+1, depth, keys) })
	case c != '{':
		return s.Skip()
	}
	return s.Object(func(key []byte) bool {
		if level+1 < depth {
			return scanKeys(s, level+1, depth, keys)
		}
		if s.Peek() != '"' {
			if len(key) > 0 {
				keys[string(key)] = ""
			}
			return s.Skip()
		}
		v, ok := s.Str()
		if len(key) > 0 { // no format has an empty key, nor do the tokens keep one
			keys[string(key)] = string(v)
		}
		return ok
	})
}

// tokenKeys is jsonKeys through encoding/json's tokens.
func tokenKeys(head []byte, depth int) map[string]string {
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.UseNumber()
	keys := map[string]string{}
	type frame struct {
		object    bool
		expectKey bool
	}
	var stack []frame
	pendingKey := ""
	for {
		tok, err := dec.Token()
		if err != nil {
			return keys
		}
		level := len(stack)
		isValue := true
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if level == depth && pendingKey != "" {
					keys[pendingKey] = ""
					pendingKey = ""
				}
				if level > 0 && stack[level-1].object {
					stack[level-1].expectKey = true
				}
				stack = append(stack, frame{object: v == '{', expectKey: v == '{'})
				continue
			default:
				stack = stack[:level-1]
				if len(stack) == 0 {
					return keys
				}
				continue
			}
		case string:
			if level > 0 && stack[level-1].object && stack[level-1].expectKey {
				stack[level-1].expectKey = false
				if level == depth {
					pendingKey = v
				}
				isValue = false
			} else if level == depth && pendingKey != "" {
				keys[pendingKey] = v
				pendingKey = ""
			}
		}
		if isValue {
			if level == depth && pendingKey != "" {
				keys[pendingKey] = ""
				pendingKey = ""
			}
			if level > 0 && stack[level-1].object {
				stack[level-1].expectKey = true
			}
		}
	}
}

// firstLines returns up to n non-blank lines from the start of head; the last
// one may be cut off.
func firstLines(head []byte, n int) [][]byte {
	var lines [][]byte
	for len(head) > 0 && len(lines) < n {
		line, rest, _ := bytes.Cut(head, []byte{'\n'})
		head = rest
		if len(bytes.TrimSpace(line)) > 0 {
			lines = append(lines, line)
		}
	}
	return lines
}

// FirstByte returns the first byte of data past a byte-order mark and white
// space, or 0: enough to tell a JSON array from an object from anything else.
// It is exported for sniffers outside ingest; the one definition is
// jsontext's, since the JSON text helpers below ingest read values by it too.
func FirstByte(head []byte) byte { return jsontext.FirstByte(head) }

// lineReader yields the lines of a stream one at a time, of any length,
// counting them. The returned slice is valid until the next call.
//
// The lines are JSON text whose strings over a limit are cut as they
// stream (see jsonClipper), with memory bounded by the limit whatever the
// length of a string. Only a line longer than the limit can hold such a
// string, so a shorter one, nearly every line, is returned as read, from
// the reader's buffer: a line is cut from where it grows past the limit,
// by a clipper that starts it afresh (no string goes on past a line's end).
type lineReader struct {
	br   *bufio.Reader
	line int
	long []byte // a line longer than the buffer, while it is within the limit
	// limit is the text limit, or 0 to cut nothing; clip cuts a line over
	// it into cut.
	limit int
	clip  *jsonClipper
	cut   []byte
}

// newLineReader reads r's lines; size, when not 0, is r's length, which
// bounds the buffer (a buffer of the full size for each file of a walk of
// many small ones was most of what it allocated).
func newLineReader(r io.Reader, limit, size int) *lineReader {
	buffer := 256 << 10
	if size > 0 {
		buffer = min(buffer, size+1)
	}
	lr := &lineReader{br: bufio.NewReaderSize(r, buffer), limit: limit}
	if limit > 0 {
		lr.clip = &jsonClipper{limit: limit, emit: func(b []byte) { lr.cut = append(lr.cut, b...) }}
	}
	return lr
}

// Next returns the next line without its line ending, and its 1-based number.
// It returns io.EOF after the last line.
func (lr *lineReader) Next() ([]byte, int, error) {
	lr.long = lr.long[:0]
	cutting := false
	for {
		chunk, err := lr.br.ReadSlice('\n')
		switch {
		case err != nil && !errors.Is(err, bufio.ErrBufferFull) && !errors.Is(err, io.EOF):
			return nil, lr.line, err
		case cutting:
			lr.clip.write(chunk)
		case err == nil && len(lr.long) == 0 && (lr.clip == nil || len(chunk) <= lr.limit):
			// A whole line in the buffer, within the limit.
			lr.line++
			return bytes.TrimSuffix(chunk[:len(chunk)-1], []byte{'\r'}), lr.line, nil
		default:
			lr.long = append(lr.long, chunk...)
			if lr.clip != nil && len(lr.long) > lr.limit {
				cutting = true
				lr.cut = lr.cut[:0]
				lr.clip.write(lr.long)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // a line longer than the buffer: keep collecting it
		}
		line := lr.long
		if cutting {
			if err != nil {
				lr.clip.finish() // the input ends inside the line
			}
			line = lr.cut
		}
		if err == nil {
			line = line[:len(line)-1] // the newline, which a clipper passes through
		} else if len(line) == 0 {
			return nil, lr.line, io.EOF
		}
		lr.line++
		return bytes.TrimSuffix(line, []byte{'\r'}), lr.line, nil
	}
}

// nextContent returns the next line that is not blank, and its number. It
// stops when ctx is done, returns io.EOF after the last line, and names the
// line of a read error.
func (lr *lineReader) nextContent(ctx context.Context) ([]byte, int, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, lr.line, err
		}
		line, n, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return nil, n, io.EOF
		}
		if err != nil {
			return nil, n, fmt.Errorf("line %d: %w", n+1, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return line, n, nil
		}
	}
}

// JSONKind names the kind of a raw JSON value, for error messages.
func JSONKind(raw []byte) string {
	switch FirstByte(raw) {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case 0:
		return "nothing"
	}
	return "a number"
}
