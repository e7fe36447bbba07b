package ingest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// jsonScanner reads one JSON document in a single pass, validating as it
// goes, for the decoders that read many lines or values of one known shape
// (a Codex rollout's events): encoding/json checks a whole document before
// it decodes it, and each JSON string held in a string is checked and
// decoded again. A scanner method reports false on anything it does not
// handle as encoding/json would without fail (invalid JSON, a value of
// another type than the field's, a key that is not written plainly), and
// the caller then decodes the document with encoding/json, whose result
// and error it keeps: the scanner is a shortcut for well-formed input,
// never a second set of rules.
type jsonScanner struct {
	b   []byte
	i   int
	buf []byte // the content of the last string read with escapes
}

// maxScanDepth bounds the nesting the scanner follows; deeper documents
// are left to encoding/json (whose own bound is 10,000).
const maxScanDepth = 512

func (s *jsonScanner) reset(b []byte) {
	s.b, s.i = b, 0
}

// scannedValue is a type the scanner decodes: scan reads its value.
type scannedValue[T any] interface {
	*T
	scan(s *jsonScanner) bool
}

// unmarshal decodes doc into v as json.Unmarshal does: in one pass when it
// is well formed (see jsonScanner), through encoding/json otherwise, whose
// result and error it then is.
func unmarshal[T any, P scannedValue[T]](s *jsonScanner, doc []byte, v P) error {
	var zero T
	*v = zero
	s.reset(doc)
	if v.scan(s) && s.end() {
		return nil
	}
	*v = zero
	return json.Unmarshal(doc, v)
}

func (s *jsonScanner) space() {
	for s.i < len(s.b) && isJSONSpace(s.b[s.i]) {
		s.i++
	}
}

// peek returns the next byte past white space, or 0 at the end.
func (s *jsonScanner) peek() byte {
	s.space()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// end reports whether only white space is left.
func (s *jsonScanner) end() bool { return s.peek() == 0 && s.i == len(s.b) }

// object reads the members of an object, calling member with each key
// (its raw bytes) when the scanner is at its value, which member must
// read. It reports false when the object is malformed, a key has escapes,
// or member does.
func (s *jsonScanner) object(member func(key []byte) bool) bool {
	if s.peek() != '{' {
		return false
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		key, ok := s.key()
		if !ok || !member(key) {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// array reads the elements of an array, calling elem at each, which must
// read it.
func (s *jsonScanner) array(elem func() bool) bool {
	if s.peek() != '[' {
		return false
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// key reads an object's key and the colon after it. A key with escapes
// is not handled (encoding/json matches its decoded form).
func (s *jsonScanner) key() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	start := s.i + 1
	n := plainRun(s.b[start:])
	end := start + n
	if end >= len(s.b) || s.b[end] != '"' {
		// An escape, a control character, or a byte past ASCII: let
		// encoding/json decide (it folds Unicode keys to match fields).
		return nil, false
	}
	s.i = end + 1
	if s.peek() != ':' {
		s.i = start - 1 // where it was, for escapedKey
		return nil, false
	}
	s.i++
	return s.b[start:end], true
}

// str reads a string value: its content decoded as encoding/json decodes
// it (escapes read, invalid UTF-8 and lone surrogates as U+FFFD). The
// bytes are the input's or the scanner's buffer, valid until the next
// string is read.
func (s *jsonScanner) str() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	start := s.i + 1
	i := start + plainRun(s.b[start:])
	if i < len(s.b) && s.b[i] == '"' {
		s.i = i + 1
		return s.b[start:i], true
	}
	out := append(s.buf[:0], s.b[start:i]...)
	for i < len(s.b) {
		c := s.b[i]
		switch {
		case c == '"':
			s.i = i + 1
			s.buf = out
			return out, true
		case c == '\\':
			var ok bool
			if out, i, ok = appendEscape(out, s.b, i); !ok {
				return nil, false
			}
		case c < 0x20:
			return nil, false
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(s.b[i:])
			out = utf8.AppendRune(out, r) // an invalid byte is U+FFFD, as encoding/json reads it
			i += size
		}
		n := plainRun(s.b[i:])
		out = append(out, s.b[i:i+n]...)
		i += n
	}
	return nil, false
}

// appendEscape decodes the escape sequence at b[i] (a backslash) onto out,
// as encoding/json does, and returns where the input goes on.
func appendEscape(out, b []byte, i int) ([]byte, int, bool) {
	if i+1 >= len(b) {
		return nil, 0, false
	}
	switch c := b[i+1]; c {
	case '"', '\\', '/':
		return append(out, c), i + 2, true
	case 'b':
		return append(out, '\b'), i + 2, true
	case 'f':
		return append(out, '\f'), i + 2, true
	case 'n':
		return append(out, '\n'), i + 2, true
	case 'r':
		return append(out, '\r'), i + 2, true
	case 't':
		return append(out, '\t'), i + 2, true
	case 'u':
		r, ok := hex4(b, i+2)
		if !ok {
			return nil, 0, false
		}
		i += 6
		if r >= 0xD800 && r < 0xE000 {
			// A surrogate: with a low half after it, one rune; otherwise
			// U+FFFD, the next escape read on its own.
			if r < 0xDC00 && i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
				if lo, ok := hex4(b, i+2); ok && lo >= 0xDC00 && lo < 0xE000 {
					return utf8.AppendRune(out, (r-0xD800)<<10+(lo-0xDC00)+0x10000), i + 6, true
				}
			}
			r = utf8.RuneError
		}
		return utf8.AppendRune(out, r), i, true
	}
	return nil, 0, false
}

// hex4 reads the four hex digits of a \u escape at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// stringInto reads a value for a string field: a string, or null, which
// leaves the field as it was (as encoding/json does).
func (s *jsonScanner) stringInto(dst *string) bool {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	b, ok := s.str()
	if ok {
		*dst = string(b)
	}
	return ok
}

// structInto reads a value for a struct field: an object, whose members
// member reads, or null, which leaves the struct as it was.
func (s *jsonScanner) structInto(member func(key []byte) bool) bool {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	return s.object(member)
}

// rawInto reads any value for a json.RawMessage field, as the slice of the
// input it is.
func (s *jsonScanner) rawInto(dst *[]byte) bool {
	s.space()
	start := s.i
	if !s.skip() {
		return false
	}
	*dst = s.b[start:s.i:s.i]
	return true
}

// intPtrInto reads a value for a *int field: an integer, or null, which
// sets it to nil.
func (s *jsonScanner) intPtrInto(dst **int) bool {
	if s.peek() == 'n' {
		*dst = nil
		return s.literal("null")
	}
	start := s.i
	if !s.number() {
		return false
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, strconv.IntSize)
	if err != nil {
		return false // a fraction, an exponent, or out of range: a type error
	}
	v := int(n)
	*dst = &v
	return true
}

// other reads the value of a key the caller has no field for, which
// encoding/json checks and skips. A key that differs from one of fields
// (the JSON names of the fields) only in case is not handled: encoding/json
// decodes it into that field.
func (s *jsonScanner) other(key []byte, fields []string) bool {
	for _, f := range fields {
		if strings.EqualFold(string(key), f) {
			return false
		}
	}
	return s.skip()
}

// jsonFieldNames lists the JSON names of the fields of the struct type T,
// as encoding/json reads them from their tags, for other.
func jsonFieldNames[T any]() []string {
	t := reflect.TypeFor[T]()
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

// skip reads past one value of any kind, checking it is valid JSON.
func (s *jsonScanner) skip() bool {
	// open holds the containers entered: true for an object.
	var stack [64]bool
	open := stack[:0]
	for {
		// A value.
		switch s.peek() {
		case '{', '[':
			if len(open) == maxScanDepth {
				return false
			}
			obj := s.b[s.i] == '{'
			s.i++
			closing := byte(']')
			if obj {
				closing = '}'
			}
			if s.peek() == closing {
				s.i++
				break
			}
			if obj {
				if _, ok := s.key(); !ok && !s.escapedKey() {
					return false
				}
			}
			open = append(open, obj)
			continue
		case '"':
			if !s.skipString() {
				return false
			}
		case 't':
			if !s.literal("true") {
				return false
			}
		case 'f':
			if !s.literal("false") {
				return false
			}
		case 'n':
			if !s.literal("null") {
				return false
			}
		default:
			if !s.number() {
				return false
			}
		}
		// After a value: close what it ends, or go on to the next member.
		for {
			if len(open) == 0 {
				return true
			}
			obj := open[len(open)-1]
			c := s.peek()
			if c == ',' {
				s.i++
				if obj {
					if _, ok := s.key(); !ok && !s.escapedKey() {
						return false
					}
				}
				break
			}
			if obj && c == '}' || !obj && c == ']' {
				s.i++
				open = open[:len(open)-1]
				continue
			}
			return false
		}
	}
}

// escapedKey reads past a key that key does not handle, and its colon, in
// a value only checked.
func (s *jsonScanner) escapedKey() bool {
	if s.peek() != '"' || !s.skipString() || s.peek() != ':' {
		return false
	}
	s.i++
	return true
}

// skipString reads past a string, checking it.
func (s *jsonScanner) skipString() bool {
	b := s.b
	i := s.i + 1
	for {
		i += plainRun(b[i:])
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return true
		case c == '\\':
			if i+1 >= len(b) {
				return false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(b, i+2); !ok {
					return false
				}
				i += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		default:
			i++ // past ASCII: any byte is valid in a string
		}
	}
}

func (s *jsonScanner) literal(word string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}

// number reads past a number, checking its syntax.
func (s *jsonScanner) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return false
		}
		i = j
	}
	s.i = i
	return true
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// plainRun returns the length of the start of b that is string content
// needing no attention: no quote, backslash, control character, or byte
// past ASCII. It looks at eight bytes at a time, as long strings (a
// tool's whole output) are most of what is read.
func plainRun(b []byte) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ ('"' * ones)
		bs := x ^ ('\\' * ones)
		// A byte is below 0x20, zero after the xor (the quote or the
		// backslash), or has its high bit set: the word needs a closer look.
		if ((x-0x20*ones)|(q-ones)|(bs-ones)|x)&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return i
		}
	}
	return i
}
