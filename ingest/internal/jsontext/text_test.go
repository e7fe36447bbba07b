package jsontext

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The reference readings the fast paths must agree with: encoding/json's.
func referenceRawText(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func TestRawText(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`"plain text"`, "plain text"},
		{` "padded" `, "padded"},
		{`"caf\u00e9 \"quoted\"\nnext"`, "café \"quoted\"\nnext"},
		{`"naïve"`, "naïve"},
		{"\"bad \xff byte\"", "bad \ufffd byte"},
		{"\"raw\ttab\"", "\"raw\ttab\""}, // a control character: not a JSON string, kept
		{`"unterminated`, `"unterminated`},
		{`"a"b"`, `"a"b"`},
		{`{"command": ["ls", "-l"], "cwd" : "/tmp"}`, `{"command":["ls","-l"],"cwd":"/tmp"}`},
		{`{"text":"keep  these  spaces"}`, `{"text":"keep  these  spaces"}`},
		{`{"esc":"a\"  b"}`, `{"esc":"a\"  b"}`},
		{`[1, 2]`, `[1,2]`},
		{`{"broken": }`, `{"broken": }`},
		{`null`, ""},
		{``, ""},
		{`42`, "42"},
	} {
		if got := RawText(json.RawMessage(tc.raw)); got != tc.want {
			t.Errorf("RawText(%q) = %q, want %q", tc.raw, got, tc.want)
		}
		if got, want := RawText(json.RawMessage(tc.raw)), referenceRawText([]byte(tc.raw)); got != want {
			t.Errorf("RawText(%q) = %q, encoding/json reads %q", tc.raw, got, want)
		}
	}
}

func TestLooseText(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
		ok        bool
	}{
		{`"one line"`, "one line", true},
		{` "spaced" `, "spaced", true},
		{`"tab\tescaped"`, "tab\tescaped", true},
		{`["a\r", "b"]`, "a\nb", true},
		{`12.5`, "12.5", true},
		{`"open`, "", false},
		{`{}`, "", false},
	} {
		got, ok := LooseText(json.RawMessage(tc.raw))
		if got != tc.want || ok != tc.ok {
			t.Errorf("LooseText(%q) = %q, %v; want %q, %v", tc.raw, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzRawText checks the fast paths against encoding/json on any input.
func FuzzRawText(f *testing.F) {
	for _, seed := range []string{`"x"`, `"a\"b"`, `{"a": 1}`, `{"a":"b c"}`, `[ ]`, "\"\xe9\"", `"\u2028"`, `{"a":"\\"} `, `"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if got, want := RawText(raw), referenceRawText(raw); got != want {
			t.Fatalf("RawText(%q) = %q, encoding/json reads %q", raw, got, want)
		}
		var s string
		wantOK := json.Unmarshal(bytes.TrimSpace(raw), &s) == nil
		got, ok := unquote(bytes.TrimSpace(raw))
		if ok != wantOK || (ok && got != s) {
			t.Fatalf("unquote(%q) = %q, %v; encoding/json reads %q, %v", raw, got, ok, s, wantOK)
		}
	})
}
