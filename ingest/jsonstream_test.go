package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/faultline/faultline/trace"
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

// A document cut short anywhere is reported where it ends: decoding goes on
// to the end (no "decoding stopped: EOF"), and every error names its line
// or byte. Inspect, which streams one object holding everything (often on
// one line), also names the JSON path it was reading.
func TestTruncatedDocumentsSayWhere(t *testing.T) {
	otlp, err := os.ReadFile(filepath.Join("testdata", "otlp", "genai_current.json"))
	if err != nil {
		t.Fatal(err)
	}
	inspectLog := `{"version": 2, "eval": {"eval_id": "E1"}, "samples": [` + inspectSamples[0] + `]}`
	tests := []struct {
		format Format
		data   string
	}{
		{Codex{}, codexSample},
		{MAD{}, madHumanSample},
		{OTLPJSON{}, string(otlp)},
		{InspectAI{}, inspectLog},
		{InspectAI{}, `{"" `},
		{WhoWhen{}, whoWhenAG2},
		{TauBench{}, tauResults},
		{ATIF{}, atifSample},
		{Docent{}, docentRuns},
		{MagenticOne{}, magenticLogSample},
		{OpenAIChat{}, chatShapes},
	}
	for _, tc := range tests {
		for cut := 1; cut < len(tc.data); cut += max(1, len(tc.data)/40) {
			in := tc.data[:cut]
			var issues []Issue
			i := &Input{Path: "cut.json", R: strings.NewReader(in), report: func(is Issue) { issues = append(issues, is) }}
			if err := tc.format.Decode(context.Background(), i, func(*trace.Trace) error { return nil }); err != nil {
				t.Errorf("%s cut at %d: decoding stopped: %v", tc.format.Name(), cut, err)
			}
			for _, is := range issues {
				if is.Severity == Error && is.Line == 0 && !strings.Contains(is.Message, "byte ") {
					t.Errorf("%s cut at %d: %s says not where", tc.format.Name(), cut, is)
				}
			}
		}
	}
	_, issues := decodeWith(t, InspectAI{}, "x.json", strings.NewReader(`{"samples": [{"id": 1, "messages": [{"content": "ab`))
	if len(issues) != 1 || issues[0].String() != `x.json:1: truncated JSON: the file ends inside a record; reading stopped after 0 samples (the log ends in samples[0].messages[0].content, at byte 51)` {
		t.Errorf("issues %v", issues)
	}
}
