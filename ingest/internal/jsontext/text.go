// Package jsontext reads JSON values as the text a step shows. The formats
// of package ingest and the OpenTelemetry mapping of package ingest/otel
// both read message content, tool arguments and results this way; it sits
// below both so that neither imports the other for it.
package jsontext

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// FirstByte returns the first byte of data past a byte-order mark and white
// space, or 0: enough to tell a JSON array from an object from anything else.
func FirstByte(head []byte) byte {
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	t = bytes.TrimPrefix(t, []byte("\xef\xbb\xbf"))
	t = bytes.TrimLeft(t, " \t\r\n")
	if len(t) == 0 {
		return 0
	}
	return t[0]
}

// TextOf reads a field that should hold text: a string, a number, or a
// list of lines (see LooseText); null and absence are "". ok is false for
// anything else.
func TextOf(raw json.RawMessage) (string, bool) {
	switch FirstByte(raw) {
	case 0, 'n':
		return "", true
	}
	return LooseText(raw)
}

// LooseText reads a JSON string, or a list of strings as lines, or a
// number as its literal. Python dumps of MAD store multi-line text both ways.
func LooseText(raw json.RawMessage) (string, bool) {
	switch FirstByte(raw) {
	case '"':
		return unquote(bytes.TrimSpace(raw))
	case '[':
		var lines []string
		if json.Unmarshal(raw, &lines) == nil {
			for i, l := range lines {
				lines[i] = strings.TrimSuffix(l, "\r")
			}
			return strings.Join(lines, "\n"), true
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var n json.Number
		if json.Unmarshal(raw, &n) == nil {
			return n.String(), true
		}
	}
	return "", false
}

// RawText turns a JSON value into text: a string unquoted, anything else
// (an object of arguments, a tool's structured response) compact JSON.
func RawText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		if s, ok := unquote(raw); ok {
			return s
		}
	}
	return Compact(raw)
}

// unquote reads a JSON string. One with no escape, no control character
// and valid UTF-8, most of what tools and models write, is its bytes
// between the quotes, taken without encoding/json's reflection and its
// second pass over the bytes (a fifth of mapping a received trace).
func unquote(raw []byte) (string, bool) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		inner := raw[1 : n-1]
		plain := true
		for _, c := range inner {
			if c == '\\' || c == '"' || c < 0x20 {
				plain = false
				break
			}
		}
		if plain && utf8.Valid(inner) {
			return string(inner), true
		}
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// Compact is raw without insignificant white space, or raw as it is when it
// is not JSON. Without white space outside its strings it is raw either
// way, and is not scanned a second time to say so.
func Compact(raw json.RawMessage) string {
	if !spaceOutsideStrings(raw) {
		return string(raw)
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// spaceOutsideStrings reports whether raw holds JSON white space outside
// its strings, reading it as JSON (what it makes of text that is not JSON
// does not matter: Compact returns that as it is).
func spaceOutsideStrings(raw []byte) bool {
	inString, escaped := false, false
	for _, c := range raw {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return true
		}
	}
	return false
}
