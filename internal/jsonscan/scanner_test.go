package jsonscan

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// scanCases are documents whose reading differs between a naive scanner
// and encoding/json.
var scanCases = []string{
	`{"a":"x","b":[1,{"c":[true,false,null,-0.5e+3]}]}`,
	`"a\nlong\ttext \"quoted\" \\ \/ \u00e9\ud83d\ude00"`,
	`{"a":"x"} {"a":"y"}`,
	`{"a":"x",}`,
	`"x\u12"`,
	`"\ud800\u0041\udc00"`,
	"\"a\tb\"",
	`01`, `1.`, `-`, `[1,]`, `1e`, `-0.0E-7`,
	`{"\u00e9":1,"é":2}`,
	`[]`, `null`, ` "a string" `, `{}`,
	"\xef\xbb\xbf{}",
	"\"\xff\xfe\"",
	`{"a":1,"a":{"b":[2]}, "c" : "d" }`,
	`{"a\u0062":1}`,
	"{\"\xff\":1}",
	`{"a":1}x`,
	`[1e400]`, `{"a":[1.5,-2e-3,{"b":null}],"c":true,"a":"last"}`, `[[],{}]`,
	strings.Repeat("[", 600) + strings.Repeat("]", 600),
}

func FuzzScanner(f *testing.F) {
	for _, c := range scanCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkSkip(t, doc)
		checkString(t, doc)
		checkRawObject(t, doc)
	})
}

// checkRawObject holds RawObject, Any and String to encoding/json's
// readings.
func checkRawObject(t *testing.T, doc []byte) {
	t.Helper()
	got, gotErr := RawObject(doc)
	var want map[string]json.RawMessage
	err := json.Unmarshal(doc, &want)
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotErr, err) {
		t.Fatalf("RawObject reads %q (%v), encoding/json %q (%v): %q", got, gotErr, want, err, doc)
	}
	anyValue, gotErr := Any(doc)
	var wantAny any
	err = json.Unmarshal(doc, &wantAny)
	if !reflect.DeepEqual(anyValue, wantAny) || !reflect.DeepEqual(gotErr, err) {
		t.Fatalf("Any reads %#v (%v), encoding/json %#v (%v): %q", anyValue, gotErr, wantAny, err, doc)
	}
	str, gotErr := String(doc)
	var wantStr string
	err = json.Unmarshal(doc, &wantStr)
	if str != wantStr || !reflect.DeepEqual(gotErr, err) {
		t.Fatalf("String reads %q (%v), encoding/json %q (%v): %q", str, gotErr, wantStr, err, doc)
	}
}

// checkSkip holds Skip to json.Valid: the same answer, but for nesting
// deeper than the scanner follows.
func checkSkip(t *testing.T, doc []byte) {
	t.Helper()
	var s Scanner
	s.Reset(doc)
	ok := s.Skip() && s.End()
	valid := json.Valid(doc)
	if ok != valid && (ok || len(doc) <= MaxDepth) {
		t.Fatalf("Skip says %v, json.Valid %v: %q", ok, valid, doc)
	}
}

// checkString holds Str to encoding/json's reading of a string.
func checkString(t *testing.T, doc []byte) {
	t.Helper()
	var s Scanner
	s.Reset(doc)
	got, ok := s.Str()
	ok = ok && s.End()
	var want string
	err := json.Unmarshal(doc, &want)
	switch {
	case ok && err != nil:
		t.Fatalf("Str accepts what encoding/json refuses (%v): %q", err, doc)
	case ok && string(got) != want:
		t.Fatalf("Str reads %q, encoding/json %q: %q", got, want, doc)
	case !ok && err == nil && bytes.HasPrefix(bytes.TrimLeft(doc, " \t\r\n"), []byte(`"`)):
		t.Fatalf("Str refuses a string encoding/json reads: %q", doc)
	}
}

// TestPlainRun checks the eight-bytes-at-a-time scan against the byte
// loop, at every offset of every byte that stops it.
func TestPlainRun(t *testing.T) {
	for _, stop := range []byte{'"', '\\', 0, 0x1f, 0x80, 0xff} {
		for n := range 20 {
			b := []byte(strings.Repeat("a ~\x7f", 6))
			if n < len(b) {
				b[n] = stop
			}
			want := min(n, len(b))
			if got := plainRun(b); got != want {
				t.Errorf("stop %#x at %d: plainRun = %d", stop, n, got)
			}
		}
	}
}
