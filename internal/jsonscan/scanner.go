// Package jsonscan reads JSON documents of a known shape in one pass, for
// the decoders whose inputs are many values of that shape, and leaves
// anything it does not read exactly as encoding/json would to
// encoding/json.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Scanner reads one JSON document in a single pass, validating as it
// goes, for the decoders that read many lines or values of one known shape
// (a Codex rollout's events): encoding/json checks a whole document before
// it decodes it, and each JSON string held in a string is checked and
// decoded again. A scanner method reports false on anything it does not
// handle as encoding/json would without fail (invalid JSON, a value of
// another type than the field's, a key that is not written plainly), and
// the caller then decodes the document with encoding/json, whose result
// and error it keeps: the scanner is a shortcut for well-formed input,
// never a second set of rules.
type Scanner struct {
	b   []byte
	i   int
	buf []byte // the content of the last string read with escapes
}

// MaxDepth bounds the nesting the scanner follows; deeper documents
// are left to encoding/json (whose own bound is 10,000).
const MaxDepth = 512

func (s *Scanner) Reset(b []byte) {
	s.b, s.i = b, 0
}

// Value is a type the scanner decodes: Scan reads its value.
type Value[T any] interface {
	*T
	Scan(s *Scanner) bool
}

// Unmarshal decodes doc into v as json.Unmarshal does: in one pass when it
// is well formed (see Scanner), through encoding/json otherwise, whose
// result and error it then is.
func Unmarshal[T any, P Value[T]](s *Scanner, doc []byte, v P) error {
	var zero T
	*v = zero
	s.Reset(doc)
	if v.Scan(s) && s.End() {
		return nil
	}
	*v = zero
	return json.Unmarshal(doc, v)
}

func (s *Scanner) space() {
	for s.i < len(s.b) && IsSpace(s.b[s.i]) {
		s.i++
	}
}

// Peek returns the next byte past white space, or 0 at the end.
func (s *Scanner) Peek() byte {
	s.space()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// End reports whether only white space is left.
func (s *Scanner) End() bool { return s.Peek() == 0 && s.i == len(s.b) }

// Object reads the members of an object, calling member with each key
// (its raw bytes) when the scanner is at its value, which member must
// read. It reports false when the object is malformed, a key has escapes,
// or member does.
func (s *Scanner) Object(member func(key []byte) bool) bool {
	return s.items('{', '}', func() bool {
		key, ok := s.key()
		return ok && member(key)
	})
}

// List reads an array of objects into the empty list *list, the members
// of each element read by member, or null, which leaves *list as it was.
// An empty array reads as an empty list, not nil, as encoding/json reads
// it.
func List[T any](s *Scanner, list *[]T, member func(elem *T, key []byte) bool) bool {
	if s.Peek() == 'n' {
		return s.Literal("null")
	}
	if *list == nil {
		*list = []T{}
	}
	return s.Array(func() bool {
		*list = append(*list, *new(T))
		elem := &(*list)[len(*list)-1]
		return s.StructInto(func(key []byte) bool { return member(elem, key) })
	})
}

// Array reads the elements of an array, calling elem at each, which must
// read it.
func (s *Scanner) Array(elem func() bool) bool {
	return s.items('[', ']', elem)
}

// items reads a container that opens with open and closes with closing,
// calling item at each of its comma-separated items, which must read it.
func (s *Scanner) items(open, closing byte, item func() bool) bool {
	if s.Peek() != open {
		return false
	}
	s.i++
	if s.Peek() == closing {
		s.i++
		return true
	}
	for {
		if !item() {
			return false
		}
		switch s.Peek() {
		case ',':
			s.i++
		case closing:
			s.i++
			return true
		default:
			return false
		}
	}
}

// key reads an object's key and the colon after it. A key with escapes
// is not handled (encoding/json matches its decoded form).
func (s *Scanner) key() ([]byte, bool) {
	if s.Peek() != '"' {
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
	if s.Peek() != ':' {
		s.i = start - 1 // where it was, for escapedKey
		return nil, false
	}
	s.i++
	return s.b[start:end], true
}

// Str reads a string value: its content decoded as encoding/json decodes
// it (escapes read, invalid UTF-8 and lone surrogates as U+FFFD). The
// bytes are the input's or the scanner's buffer, valid until the next
// string is read.
func (s *Scanner) Str() ([]byte, bool) {
	if s.Peek() != '"' {
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

// StringInto reads a value for a string field: a string, or null, which
// leaves the field as it was (as encoding/json does).
func (s *Scanner) StringInto(dst *string) bool {
	if s.Peek() == 'n' {
		return s.Literal("null")
	}
	b, ok := s.Str()
	if ok {
		*dst = string(b)
	}
	return ok
}

// StructInto reads a value for a struct field: an object, whose members
// member reads, or null, which leaves the struct as it was.
func (s *Scanner) StructInto(member func(key []byte) bool) bool {
	if s.Peek() == 'n' {
		return s.Literal("null")
	}
	return s.Object(member)
}

// RawInto reads any value for a json.RawMessage field, as the slice of the
// input it is.
func (s *Scanner) RawInto(dst *[]byte) bool {
	s.space()
	start := s.i
	if !s.Skip() {
		return false
	}
	*dst = s.b[start:s.i:s.i]
	return true
}

// IntPtrInto reads a value for a *int field: an integer, or null, which
// sets it to nil.
func (s *Scanner) IntPtrInto(dst **int) bool {
	if s.Peek() == 'n' {
		*dst = nil
		return s.Literal("null")
	}
	v, ok := s.integer()
	if ok {
		*dst = &v
	}
	return ok
}

// IntInto reads a value for an int field: an integer, or null, which
// leaves the field as it was.
func (s *Scanner) IntInto(dst *int) bool {
	if s.Peek() == 'n' {
		return s.Literal("null")
	}
	v, ok := s.integer()
	if ok {
		*dst = v
	}
	return ok
}

// integer reads a number that is an int; a fraction, an exponent or a
// number out of range is a type error to encoding/json.
func (s *Scanner) integer() (int, bool) {
	s.space()
	start := s.i
	if !s.number() {
		return 0, false
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, strconv.IntSize)
	return int(n), err == nil
}

// Other reads the value of a key the caller has no field for, which
// encoding/json checks and skips. A key that differs from one of fields
// (the JSON names of the fields) only in case is not handled: encoding/json
// decodes it into that field.
func (s *Scanner) Other(key []byte, fields []string) bool {
	for _, f := range fields {
		if strings.EqualFold(string(key), f) {
			return false
		}
	}
	return s.Skip()
}

// FieldNames lists the JSON names of the fields of the struct type T,
// as encoding/json reads them from their tags, for other.
func FieldNames[T any]() []string {
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

// Skip reads past one value of any kind, checking it is valid JSON.
func (s *Scanner) Skip() bool {
	// open holds the containers entered: true for an object.
	var stack [64]bool
	open := stack[:0]
	for {
		// A value.
		switch s.Peek() {
		case '{', '[':
			if len(open) == MaxDepth {
				return false
			}
			obj := s.b[s.i] == '{'
			s.i++
			closing := byte(']')
			if obj {
				closing = '}'
			}
			if s.Peek() == closing {
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
			if !s.Literal("true") {
				return false
			}
		case 'f':
			if !s.Literal("false") {
				return false
			}
		case 'n':
			if !s.Literal("null") {
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
			c := s.Peek()
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
func (s *Scanner) escapedKey() bool {
	if s.Peek() != '"' || !s.skipString() || s.Peek() != ':' {
		return false
	}
	s.i++
	return true
}

// skipString reads past a string, checking it.
func (s *Scanner) skipString() bool {
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

func (s *Scanner) Literal(word string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}

// number reads past a number, checking its syntax.
func (s *Scanner) number() bool {
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

// IsSpace reports whether c is white space between JSON tokens.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// RawObject decodes the top level of a JSON object as json.Unmarshal into a
// map[string]json.RawMessage does, error included: each member's value is
// the bytes of doc it is, not a copy, so doc must not change while the map
// is in use. A tool call's arguments are read so for every call of every
// trace, and encoding/json reads each document twice (once to check it)
// and copies every value. Like String and Any it falls back to
// encoding/json itself rather than through Unmarshal: a Value type of its
// own would be named in encoding/json's errors in place of the map's.
func RawObject(doc []byte) (map[string]json.RawMessage, error) {
	var s Scanner
	s.Reset(doc)
	top := map[string]json.RawMessage{}
	if s.Object(func(key []byte) bool {
		var raw []byte
		if !s.RawInto(&raw) {
			return false
		}
		top[string(key)] = raw
		return true
	}) && s.End() {
		return top, nil
	}
	top = nil
	err := json.Unmarshal(doc, &top)
	return top, err
}

// String decodes doc as json.Unmarshal into a string does, error included.
func String(doc []byte) (string, error) {
	var s Scanner
	s.Reset(doc)
	if b, ok := s.Str(); ok && s.End() {
		return string(b), nil
	}
	var str string
	err := json.Unmarshal(doc, &str)
	return str, err
}

// Any decodes doc as json.Unmarshal into an interface value does, error
// included: objects as map[string]any, arrays as []any, numbers as
// float64. An agent's answer file is read so for every trace.
func Any(doc []byte) (any, error) {
	var s Scanner
	s.Reset(doc)
	if v, ok := s.anyValue(0); ok && s.End() {
		return v, nil
	}
	var v any
	err := json.Unmarshal(doc, &v)
	return v, err
}

// anyValue reads one value for Any, at the given depth of nesting.
func (s *Scanner) anyValue(depth int) (any, bool) {
	if depth > MaxDepth {
		return nil, false
	}
	switch s.Peek() {
	case '{':
		obj := map[string]any{}
		ok := s.Object(func(key []byte) bool {
			v, ok := s.anyValue(depth + 1)
			obj[string(key)] = v
			return ok
		})
		return obj, ok
	case '[':
		list := []any{}
		ok := s.Array(func() bool {
			v, ok := s.anyValue(depth + 1)
			list = append(list, v)
			return ok
		})
		return list, ok
	case '"':
		b, ok := s.Str()
		return string(b), ok
	case 't':
		return true, s.Literal("true")
	case 'f':
		return false, s.Literal("false")
	case 'n':
		return nil, s.Literal("null")
	}
	start := s.i
	if !s.number() {
		return nil, false
	}
	f, err := strconv.ParseFloat(string(s.b[start:s.i]), 64)
	return f, err == nil
}
