// Package jsontext reads JSON values as the text a step shows. The formats
// of package ingest and the OpenTelemetry mapping of package ingest/otel
// both read message content, tool arguments and results this way; it sits
// below both so that neither imports the other for it.
package jsontext

import (
	"bytes"
	"encoding/json"
	"strings"
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
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, true
		}
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
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return Compact(raw)
}

// Compact is raw without insignificant white space, or raw as it is when it
// is not JSON.
func Compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
