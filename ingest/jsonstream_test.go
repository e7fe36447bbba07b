package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// chunkReader returns its content in reads of at most n bytes, to put
// Read boundaries everywhere a test wants them.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := min(c.n, len(p), len(c.data))
	copy(p, c.data[:k])
	c.data = c.data[k:]
	return k, nil
}

func TestNaNFilter(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bare NaN", `{"a": NaN}`, `{"a": null}`},
		{"infinities", `[Infinity,-Infinity, 1]`, `[null,null, 1]`},
		{"NaN in a string", `{"a": "NaN and Infinity"}`, `{"a": "NaN and Infinity"}`},
		{"escaped quote keeps the string open", `{"a": "x\" NaN", "b": NaN}`, `{"a": "x\" NaN", "b": null}`},
		{"escaped backslash closes the string", `["x\\", NaN]`, `["x\\", null]`},
		{"key named NaN", `{"NaN": NaN}`, `{"NaN": null}`},
		{"negative numbers untouched", `[-1, -0.5e-3, 1e-9]`, `[-1, -0.5e-3, 1e-9]`},
		{"minus before NaN", `[-NaN]`, `[-null]`},
		{"near misses", `[Na, Inf, -In, NaNa]`, `[Na, Inf, -In, nulla]`},
		{"cut at the end", `[1, Na`, `[1, Na`},
		{"cut minus at the end", `[1, -`, `[1, -`},
		{"unicode untouched", `["é NaN ✨", NaN]`, `["é NaN ✨", null]`},
		{"empty", ``, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := io.ReadAll(newNaNFilter(strings.NewReader(tt.in)))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			// The same output whatever the Read boundaries are.
			for n := 1; n <= len(tt.in); n++ {
				got, err := io.ReadAll(newNaNFilter(&chunkReader{data: []byte(tt.in), n: n}))
				if err != nil || string(got) != tt.want {
					t.Fatalf("reads of %d bytes: got %s (%v), want %s", n, got, err, tt.want)
				}
			}
			got, err = io.ReadAll(iotest.OneByteReader(newNaNFilter(strings.NewReader(tt.in))))
			if err != nil || string(got) != tt.want {
				t.Errorf("one-byte reads from the filter: got %s (%v)", got, err)
			}
		})
	}
}

func TestNaNFilterPassesReadErrors(t *testing.T) {
	boom := errors.New("disk on fire")
	r := io.MultiReader(strings.NewReader(`[Na`), iotest.ErrReader(boom))
	got, err := io.ReadAll(newNaNFilter(r))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if string(got) != `[Na` {
		t.Errorf("got %q: bytes held back for a token must be kept", got)
	}
}

func TestSanitizeJSON(t *testing.T) {
	in := []byte(`{"a": "NaN", "b": -Infinity}`)
	if got := string(sanitizeJSON(in)); got != `{"a": "NaN", "b": null}` {
		t.Errorf("got %s", got)
	}
	plain := []byte(`{"a": 1}`)
	if got := sanitizeJSON(plain); &got[0] != &plain[0] {
		t.Error("a document without bare tokens should not be copied")
	}
}

func TestCloseCutString(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a": "b"}`, `{"a": "b"}`},
		{`{"trace": "long te`, `{"trace": "long te"`},
		{`{"trace": "ends in \`, `{"trace": "ends in "`},
		{`{"trace": "quote \" inside`, `{"trace": "quote \" inside"`},
		{`{"a": "b", "tra`, `{"a": "b", "tra"`},
		{`{"trace": "dash \u20`, `{"trace": "dash "`},
		{`{"trace": "dash \u2014`, `{"trace": "dash \u2014"`},
		{`{"trace": "dash \\u20`, `{"trace": "dash \\u20"`},
		{``, ``},
	}
	for _, tt := range tests {
		if got := string(closeCutString([]byte(tt.in))); got != tt.want {
			t.Errorf("closeCutString(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLineIndex(t *testing.T) {
	text := "ab\ncd\n\nef"
	l := newLineIndex(&chunkReader{data: []byte(text), n: 2})
	if _, err := io.ReadAll(l); err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		offset int64
		line   int
	}{{0, 1}, {2, 1}, {3, 2}, {6, 3}, {7, 4}, {9, 4}, {3, 4}} {
		if got := l.Line(q.offset); got != q.line {
			t.Errorf("Line(%d) = %d, want %d", q.offset, got, q.line)
		}
	}
	if len(l.newlines) != 0 {
		t.Errorf("newlines already passed are kept: %v", l.newlines)
	}
}

// records drains a jsonRecords, returning the records (compacted), their
// lines, and the error that ended the iteration.
func records(t *testing.T, r io.Reader) ([]string, []int, error) {
	t.Helper()
	s := newJSONRecords(r)
	var got []string
	var lines []int
	for {
		raw, line, err := s.Next()
		if err != nil {
			if _, _, again := s.Next(); again != io.EOF {
				t.Errorf("Next after the end returned %v, want io.EOF", again)
			}
			return got, lines, err
		}
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			t.Fatalf("record %s is not valid JSON: %v", raw, err)
		}
		got = append(got, b.String())
		lines = append(lines, line)
	}
}

func TestJSONRecords(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      []string
		lines     []int
		errLine   int    // 0: the iteration ends with io.EOF
		errSubstr string // in the *jsonStreamError message
	}{
		{name: "array", in: "[\n {\"a\": 1},\n {\"a\": 2}\n]\n", want: []string{`{"a":1}`, `{"a":2}`}, lines: []int{2, 3}},
		{name: "single object", in: "\n\n{\"a\": NaN}", want: []string{`{"a":null}`}, lines: []int{3}},
		{name: "JSON lines", in: "{\"a\":1}\n{\"a\":2}\n\n{\"a\":3}\n", want: []string{`{"a":1}`, `{"a":2}`, `{"a":3}`}, lines: []int{1, 2, 4}},
		{name: "arrays back to back", in: "[{\"a\":1}]\n[{\"a\":2}]", want: []string{`{"a":1}`, `{"a":2}`}, lines: []int{1, 2}},
		{name: "empty array", in: "[]", want: nil},
		{name: "empty input", in: "  \n", want: nil},
		{name: "byte-order mark", in: "\xef\xbb\xbf[\n{\"a\":1}]", want: []string{`{"a":1}`}, lines: []int{2}},
		{name: "multi-line record starts where it starts", in: "[\n{\n\"a\":\n1\n},\n{\"b\":2}]", want: []string{`{"a":1}`, `{"b":2}`}, lines: []int{2, 6}},
		{name: "syntax error in second record", in: "[\n{\"a\":1},\n{\"a\":\n oops}\n]", want: []string{`{"a":1}`}, lines: []int{2}, errLine: 4, errSubstr: "invalid character 'o'"},
		{name: "missing comma", in: "[\n{\"a\":1}\n{\"a\":2}]", want: []string{`{"a":1}`}, lines: []int{2}, errLine: 3, errSubstr: "invalid JSON"},
		{name: "truncated inside a record", in: "[\n{\"a\":1},\n{\"a\": \"cut", want: []string{`{"a":1}`}, lines: []int{2}, errLine: 3, errSubstr: "truncated JSON"},
		{name: "array not closed", in: "[\n{\"a\":1}\n\n", want: []string{`{"a":1}`}, lines: []int{2}, errLine: 3, errSubstr: "not closed"},
		{name: "stray closing bracket", in: "{\"a\":1}\n]", want: []string{`{"a":1}`}, lines: []int{1}, errLine: 2, errSubstr: "invalid"},
		{name: "garbage after the array", in: "[{\"a\":1}]\nxyz", want: []string{`{"a":1}`}, lines: []int{1}, errLine: 2, errSubstr: "invalid character 'x'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, chunk := range []int{1, 3, 1 << 20} {
				got, lines, err := records(t, &chunkReader{data: []byte(tt.in), n: chunk})
				if strings.Join(got, " ") != strings.Join(tt.want, " ") {
					t.Fatalf("chunk %d: records %v, want %v", chunk, got, tt.want)
				}
				if len(tt.lines) > 0 && !slices.Equal(lines, tt.lines) {
					t.Errorf("chunk %d: lines %v, want %v", chunk, lines, tt.lines)
				}
				var broken *jsonStreamError
				switch {
				case tt.errLine == 0 && err != io.EOF:
					t.Errorf("chunk %d: err = %v, want io.EOF", chunk, err)
				case tt.errLine != 0 && !errors.As(err, &broken):
					t.Errorf("chunk %d: err = %v, want a *jsonStreamError", chunk, err)
				case tt.errLine != 0 && (broken.Line != tt.errLine || !strings.Contains(broken.Msg, tt.errSubstr)):
					t.Errorf("chunk %d: error %v, want line %d containing %q", chunk, broken, tt.errLine, tt.errSubstr)
				}
			}
		})
	}
}

func TestJSONRecordsPassesReadErrors(t *testing.T) {
	boom := errors.New("disk on fire")
	_, _, err := records(t, io.MultiReader(strings.NewReader(`[{"a":1},`), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the reader's error", err)
	}
}
