package ingest

import (
	"maps"
	"testing"
)

// jsonKeys reads the keys at a depth as encoding/json's tokens do, whether
// it reads them in one pass or falls back to the tokens.
func TestJSONKeys(t *testing.T) {
	tests := []struct {
		name  string
		head  string
		depth int
		want  map[string]string
	}{
		{"top-level object", `{"type":"session_meta","payload":{"id":"x"},"n":1}`, 1,
			map[string]string{"type": "session_meta", "payload": "", "n": ""}},
		{"objects in an array", `[{"a":"1"},{"b":[1,2]}]`, 2, map[string]string{"a": "1", "b": ""}},
		{"objects in an object", `{"x":{"a":"1"},"y":{"b":null}}`, 2, map[string]string{"a": "1", "b": ""}},
		{"escaped value", `{"k":"a\nb\u00e9"}`, 1, map[string]string{"k": "a\nb\u00e9"}},
		{"escaped key", `{"k\u0065y":"v"}`, 1, map[string]string{"key": "v"}},
		{"cut off", `{"a":"1","b":{"c":`, 1, map[string]string{"a": "1", "b": ""}},
		{"cut off in a string", `{"a":"1","b":"tw`, 1, map[string]string{"a": "1"}},
		{"syntax error keeps what came before", `{"a":"1",,"b":"2"}`, 1, map[string]string{"a": "1"}},
		{"first value only", `{"a":"1"} {"b":"2"}`, 1, map[string]string{"a": "1"}},
		{"scalar first", `1 {"b":"2"}`, 1, map[string]string{"b": "2"}},
		{"not JSON", "# AGENTS.md\n", 1, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := jsonKeys([]byte(tt.head), tt.depth); !maps.Equal(got, tt.want) {
				t.Errorf("jsonKeys = %q, want %q", got, tt.want)
			}
			if got := tokenKeys([]byte(tt.head), tt.depth); !maps.Equal(got, tt.want) {
				t.Errorf("tokenKeys = %q, want %q", got, tt.want)
			}
		})
	}
}

func FuzzJSONKeys(f *testing.F) {
	for _, s := range []string{
		`{"type":"session_meta","payload":{"id":"x","instructions":"a\tb"}}`,
		`[{"a":"1"},{"b":[1,2,{"c":"d"}]}]`,
		`{"resourceSpans":[{"resource":{"attributes":[]}}]}`,
		`{"k\u0065y":"v","n":-1.5e3,"t":true,"f":false,"z":null}`,
		`{"a":"1","b":{"c":`,
		`1 {"b":"2"}`,
		"\xef\xbb\xbf{\"a\":\"b\"}",
		`{"a":"\ud800"}`,
		"{\"a\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		for depth := 1; depth <= 3; depth++ {
			if got, want := jsonKeys(head, depth), tokenKeys(head, depth); !maps.Equal(got, want) {
				t.Fatalf("depth %d: jsonKeys = %q, tokenKeys = %q", depth, got, want)
			}
		}
	})
}
