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
	"unicode/utf8"
)

// clipAll runs text through a clipReader of the given limit, whole and one
// byte at a time, and fails when the two differ: the cut must not depend
// on how the input is read.
func clipAll(t testing.TB, text string, limit int) (string, *clipReader) {
	t.Helper()
	cr := newClipReader(strings.NewReader(text), limit, true)
	whole, err := io.ReadAll(cr)
	if err != nil {
		t.Fatal(err)
	}
	bytewise, err := io.ReadAll(newClipReader(iotest.OneByteReader(strings.NewReader(text)), limit, true))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(whole, bytewise) {
		t.Fatalf("read whole:\n%q\nread a byte at a time:\n%q", whole, bytewise)
	}
	return string(whole), cr
}

// cutText is what a text over the limit should become: the longest head of
// whole runes within half the limit, the rest of the limit's worth of tail
// from its first whole rune, and the mark of the bytes between.
func cutText(s string, limit int) string {
	h := limit / 2
	for h > 0 && !utf8.RuneStart(s[h]) {
		h--
	}
	if len(s)-h <= limit-limit/2 {
		return s
	}
	tail := s[len(s)-(limit-limit/2):]
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return s[:h] + cutMarker(int64(len(s)-h-len(tail))) + tail
}

func quoted(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestClipReader(t *testing.T) {
	long := strings.Repeat("0123456789", 4)
	doc := `["` + strings.Repeat(`ab", "`, 40) + `"]`
	escaped := "line one\nline \"two\"\ttab \\ back é ü 😀 " + long + " end\nof ✓ text"
	tests := []struct {
		name  string
		in    string
		limit int
		// want is the output; when empty, the input unchanged.
		want string
	}{
		{name: "short strings pass", in: `{"a": "hello", "b": ["x", "y\"z"], "n": 12}`, limit: 16},
		{name: "exactly the limit passes", in: `{"a": "` + long[:16] + `"}`, limit: 16},
		{name: "long string cut", in: `{"a": "` + long + `", "b": 1}`, limit: 16,
			want: `{"a": ` + quoted(cutText(long, 16)) + `, "b": 1}`},
		{name: "long key cut too", in: `{"` + long + `": 1}`, limit: 16, want: `{` + quoted(cutText(long, 16)) + `: 1}`},
		{name: "escapes, runes and surrogates decoded", in: `["` + strings.Trim(quoted(escaped), `"`) + `", "\ud83d\ude00` + long + `\u00e9"]`, limit: 24,
			want: `[` + quoted(cutText(escaped, 24)) + `, ` + quoted(cutText("😀"+long+"é", 24)) + `]`},
		{name: "escapes written as \\u are decoded", in: `"\u0041\u0042` + long + `\u0043"`, limit: 16, want: quoted(cutText("AB"+long+"C", 16))},
		{name: "raw within the limit twice over but not decoded", in: `"` + strings.Repeat(`\u0041`, 10) + `"`, limit: 16,
			want: `"AAAAAAAAAA"`},
		{name: "lone surrogates become U+FFFD", in: `"\ud83d` + long + `\ude00"`, limit: 16, want: quoted(cutText("\uFFFD"+long+"\uFFFD", 16))},
		{name: "JSON in a string is cut inside",
			in:    `{"output": ` + quoted(`{"output": "`+long+`", "metadata": {"exit_code": 1}}`) + `}`,
			limit: 16,
			want:  `{"output": ` + quoted(`{"output": `+quoted(cutText(long, 16))+`, "metadata": {"exit_code": 1}}`) + `}`},
		{name: "JSON two levels down",
			in:    `{"output": ` + quoted(`[{"text": `+quoted(`{"spec": "`+long+`"}`)+`, "type": "text"}]`) + `}`,
			limit: 16,
			want:  `{"output": ` + quoted(`[{"text": `+quoted(`{"spec": `+quoted(cutText(long, 16))+`}`)+`, "type": "text"}]`) + `}`},
		{name: "text that starts like JSON is cut as text", in: quoted("[INFO] " + long), limit: 16, want: quoted(cutText("[INFO] "+long, 16))},
		{name: "JSON too long even cut is cut as text: its first nestedCap limits, the mark, the tail",
			in:    quoted(doc),
			limit: 16,
			want:  quoted(doc[:nestedCap*16] + cutMarker(int64(len(doc)-nestedCap*16-8)) + doc[len(doc)-8:])},
		{name: "a raw newline ends a string", in: "{\"a\": \"cut" + "\n" + `{"b": "` + long + `"}`, limit: 16,
			want: "{\"a\": \"cut\n" + `{"b": ` + quoted(cutText(long, 16)) + `}`},
		{name: "a raw newline ends a long string", in: "{\"a\": \"" + long + "\n" + `{"b": "ok"}`, limit: 16,
			want: "{\"a\": " + strings.TrimSuffix(quoted(cutText(long, 16)), `"`) + "\n" + `{"b": "ok"}`},
		{name: "truncated inside a long string", in: `{"a": "` + long, limit: 16, want: `{"a": ` + strings.TrimSuffix(quoted(cutText(long, 16)), `"`)},
		{name: "truncated inside an escape", in: `{"a": "` + long + `\u00`, limit: 16, want: `{"a": ` + strings.TrimSuffix(quoted(cutText(long+`\u00`, 16)), `"`)},
		{name: "no limit", in: `{"a": "` + long + `"}`, limit: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := clipAll(t, tc.in, tc.limit)
			want := tc.want
			if want == "" {
				want = tc.in
			}
			if got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
			if json.Valid([]byte(tc.in)) && !json.Valid([]byte(got)) {
				t.Errorf("valid JSON became invalid: %s", got)
			}
			if strings.Count(got, "\n") != strings.Count(tc.in, "\n") {
				t.Errorf("lines moved: %d raw newlines, want %d", strings.Count(got, "\n"), strings.Count(tc.in, "\n"))
			}
		})
	}
}

func TestClipReaderWhere(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"samples": [{"id": 1}, {"messages": [{"content": "ab`, "samples[1].messages[0].content"},
		{`{"eval": {"task": "x"}, "samples": [`, "samples[0]"},
		{`{"" `, `[""]`},
		{`{"a b": {"c": [1, 2, [3, `, `["a b"].c[2][1]`},
		{`{"a": 1}`, ``},
		{"{\"a\": 1}\n{\"b\": [", `b[0]`},
	}
	for _, tc := range tests {
		for _, limit := range []int{0, 4, 1 << 20} {
			_, cr := clipAll(t, tc.in, limit)
			if got := cr.Where(); got != tc.want {
				t.Errorf("%s (limit %d): where = %q, want %q", tc.in, limit, got, tc.want)
			}
		}
	}
}

// FuzzClip holds the clipReader to its promises on any input: the same
// output however the input is read, valid JSON kept valid, input within the
// limit untouched, and no string kept longer than the limit allows.
func FuzzClip(f *testing.F) {
	f.Add([]byte(`{"a": "0123456789abcdefghij", "b": "\u00e9\ud83d\ude00\n"}`), uint8(8))
	f.Add([]byte(`{"output": "{\"output\": \"0123456789abcdefghij\", \"metadata\": {\"exit_code\": 1}}"}`), uint8(8))
	f.Add([]byte("{\"a\": \"cut\n{\"b\": \"0123456789abcdefghij"), uint8(4))
	f.Add([]byte(`["[\"ab\", \"ab\", \"ab\", \"ab\", \"ab\", \"ab\", \"ab\", \"ab\", \"ab\"]"]`), uint8(6))
	f.Fuzz(func(t *testing.T, data []byte, limit uint8) {
		got, _ := clipAll(t, string(data), int(limit))
		checkLines(t, data, got, int(limit))
		if limit == 0 || len(data) <= int(limit) {
			if got != string(data) {
				t.Fatalf("input within the limit changed:\n%q\n%q", data, got)
			}
			return
		}
		if json.Valid(data) {
			if !json.Valid([]byte(got)) {
				t.Fatalf("valid JSON became invalid:\n%q\n%q", data, got)
			}
			var v any
			_ = json.Unmarshal([]byte(got), &v)
			checkClipped(t, v, int(limit))
		}
	})
}

// checkLines holds a lineReader, which cuts only the lines longer than the
// limit, each from its start, to the lines of the input cut as one stream.
func checkLines(t *testing.T, data []byte, clipped string, limit int) {
	t.Helper()
	want := strings.Split(clipped, "\n")
	if want[len(want)-1] == "" {
		want = want[:len(want)-1] // a final newline ends the last line
	}
	for i := range want {
		want[i] = strings.TrimSuffix(want[i], "\r")
	}
	// Read in one go, a byte at a time, and through a buffer of the input's
	// size (as a file read whole is) or smaller, whose lines then outgrow it.
	for _, read := range []struct {
		r    io.Reader
		size int
	}{
		{bytes.NewReader(data), 0},
		{iotest.OneByteReader(bytes.NewReader(data)), 0},
		{bytes.NewReader(data), len(data)},
		{bytes.NewReader(data), 16},
	} {
		var got []string
		lr := newLineReader(read.r, limit, read.size)
		for {
			line, n, err := lr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if n != len(got)+1 {
				t.Fatalf("line %d numbered %d", len(got)+1, n)
			}
			got = append(got, string(line))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("lines read:\n%q\nlines of the text cut as a stream:\n%q", got, want)
		}
	}
}

// checkClipped fails on a string in v longer than a cut string can be.
func checkClipped(t *testing.T, v any, limit int) {
	switch v := v.(type) {
	case string:
		bound := nestedCap*limit + 2*(limit+len(cutMarker(1<<40)))*maxNesting + 6*limit
		if len(v) > bound {
			t.Fatalf("a string of %d bytes was kept (limit %d)", len(v), limit)
		}
	case []any:
		for _, e := range v {
			checkClipped(t, e, limit)
		}
	case map[string]any:
		for k, e := range v {
			checkClipped(t, k, limit)
			checkClipped(t, e, limit)
		}
	}
}
