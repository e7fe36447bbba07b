package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

func TestJSONElementsAndFields(t *testing.T) {
	arr := "[\n  {\"a\": 1},\n\n  \"two\",\n  [3]\n]"
	els, err := jsonElements(json.RawMessage(arr))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range els {
		got = append(got, fmt.Sprintf("%s@%d", e.raw, e.lines))
	}
	if want := `{"a": 1}@1 "two"@3 [3]@4`; strings.Join(got, " ") != want {
		t.Errorf("elements %q, want %q", strings.Join(got, " "), want)
	}
	obj := "{\"z\": 1,\n \"a\": {\"x\": [1,\n2]},\n \"m\": null}"
	fs, err := jsonFields(json.RawMessage(obj))
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%s=%s@%d", f.key, f.raw, f.lines))
	}
	if want := "z=1@0 a={\"x\": [1,\n2]}@1 m=null@3"; strings.Join(got, " ") != want {
		t.Errorf("fields %q, want %q (in written order)", strings.Join(got, " "), want)
	}
	for _, tt := range []struct {
		raw  string
		obj  bool
		want string
	}{
		{`null`, false, ""}, {``, true, ""},
		{`{"a": 1}`, false, "should be an array, found an object"},
		{`"x"`, true, "should be an object, found a string"},
	} {
		var err error
		if tt.obj {
			_, err = jsonFields(json.RawMessage(tt.raw))
		} else {
			_, err = jsonElements(json.RawMessage(tt.raw))
		}
		if fmt.Sprint(err) != tt.want && !(err == nil && tt.want == "") {
			t.Errorf("%q: err %v, want %q", tt.raw, err, tt.want)
		}
	}
}

// decodedMembers is what splitJSON gave before it scanned valid JSON
// itself: the members as a decoder reads them.
func decodedMembers(raw []byte, open byte) []member {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil
	}
	var out []member
	for dec.More() {
		var m member
		if open == '{' {
			tok, _ := dec.Token()
			m.key, _ = tok.(string)
		}
		if dec.Decode(&m.raw) != nil {
			return out
		}
		m.lines = bytes.Count(raw[:int(dec.InputOffset())-len(m.raw)], []byte{'\n'})
		out = append(out, m)
	}
	return out
}

// Valid JSON is split by a scan of its bytes, into slices of the record;
// the members and their lines are those a decoder reads.
func TestScanMembers(t *testing.T) {
	for _, raw := range []string{
		`[]`, `{}`, "[\n 1 , -2.5e3,\ttrue,false ,null, \"a\\\"]}\", {\"x\": [\"]\"]}, [[], {}]\n]",
		`{"a\"b": 1, "\u00e9": {"k": "v,}"}, "n": [1, [2, [3]]], "s": "\\"}`,
		"{\n\"a\":\n\n 1,\r\n \"b\" : \"x\"\n}",
	} {
		open := FirstByte([]byte(raw))
		got, want := scanMembers([]byte(raw), open), decodedMembers([]byte(raw), open)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q:\n%v, want\n%v", raw, got, want)
		}
	}
}

func FuzzScanMembers(f *testing.F) {
	f.Add([]byte(`{"a\"b": 1, "\u00e9": {"k": "v,}"}, "n": [1, [2, [3]]], "s": "\\"}`))
	f.Add([]byte("[\n 1 , -2.5e3,\ttrue,false ,null, \"a\\\"]}\", {\"x\": [\"]\"]}, [[], {}]\n]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		open := FirstByte(data)
		if (open != '{' && open != '[') || !json.Valid(data) {
			return
		}
		if got, want := scanMembers(data, open), decodedMembers(data, open); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q:\n%v, want\n%v", data, got, want)
		}
	})
}

func TestScoreOutcome(t *testing.T) {
	tests := []struct {
		raw     string
		score   string // "" for no score
		success string // "true", "false", "undecided"
	}{
		{`1`, "1", "true"}, {`1.0`, "1", "true"}, {`0`, "0", "false"}, {`0.5`, "0.5", "false"},
		{`true`, "1", "true"}, {`false`, "0", "false"},
		{`"C"`, "1", "true"}, {`"I"`, "0", "false"}, {`"P"`, "0.5", "false"}, {`"N"`, "0", "false"},
		{`"correct"`, "1", "true"}, {`" Yes "`, "1", "true"}, {`"0.25"`, "0.25", "false"},
		{`7`, "7", "undecided"}, {`-1`, "-1", "undecided"},
		{`null`, "", ""}, {`{"a": 1}`, "", ""}, {`[1]`, "", ""}, {`"maybe"`, "", ""}, {``, "", ""},
	}
	for _, tt := range tests {
		o, ok := scoreOutcome("m", json.RawMessage(tt.raw))
		if !ok {
			if tt.score != "" {
				t.Errorf("%s: no score, want %s", tt.raw, tt.score)
			}
			continue
		}
		success := "undecided"
		if o.Success != nil {
			success = fmt.Sprint(*o.Success)
		}
		if fmt.Sprint(*o.Score) != tt.score || success != tt.success || o.Source != "format" || o.Metric != "m" {
			t.Errorf("%s: %+v score %v success %s, want %s %s", tt.raw, o, *o.Score, success, tt.score, tt.success)
		}
	}
}

func TestBoolOf(t *testing.T) {
	for raw, want := range map[string]string{`true`: "true", `"False"`: "false", `"true "`: "true", `1`: "true", `"maybe"`: "!", `null`: "!", `{}`: "!"} {
		v, ok := boolOf(json.RawMessage(raw))
		got := fmt.Sprint(v)
		if !ok {
			got = "!"
		}
		if got != want {
			t.Errorf("boolOf(%s) = %s, want %s", raw, got, want)
		}
	}
}

func TestEachRecordStopsAtABrokenDocument(t *testing.T) {
	var issues []Issue
	in := &Input{Path: "f.json", R: strings.NewReader("[{\"a\": 1},\n{\"a\": 2},\n{\"a\": "), report: func(i Issue) { issues = append(issues, i) }}
	var lines []int
	err := eachRecord(context.Background(), in, func(_ json.RawMessage, r *record) error {
		lines = append(lines, r.line)
		return nil
	})
	if err != nil || fmt.Sprint(lines) != "[1 2]" {
		t.Errorf("err %v, records at lines %v", err, lines)
	}
	if len(issues) != 1 || issues[0].String() != "f.json:3: truncated JSON: the file ends inside a record; reading stopped after 2 records" {
		t.Errorf("issues %v", issues)
	}
}

// fuzzFormat is the body of the record formats' fuzz targets: any bytes
// sniff and decode without a panic or a decoding error, and every trace
// emitted is valid, named once, and cites only its own steps; and so with
// a text limit small enough to cut, under which no text is kept longer.
func fuzzFormat(t *testing.T, f Format, data []byte) {
	f.Sniff(data)
	fuzzDecode(t, f, data, 0)
	fuzzLimited(t, f, data)
}

// fuzzLimitBytes is the text limit fuzz targets decode with too.
const fuzzLimitBytes = 16

// fuzzLimited decodes data with a text limit small enough to cut what
// fuzzing makes, checking every trace keeps to it.
func fuzzLimited(t *testing.T, f Format, data []byte) {
	for _, tr := range fuzzDecode(t, f, data, fuzzLimitBytes) {
		checkLimited(t, tr, fuzzLimitBytes)
	}
}

func fuzzDecode(t *testing.T, f Format, data []byte, limit int) []*trace.Trace {
	in := &Input{Path: "fuzz", R: bytes.NewReader(data), report: func(Issue) {}, limit: limit}
	ids := map[string]bool{}
	var traces []*trace.Trace
	err := f.Decode(context.Background(), in, func(tr *trace.Trace) error {
		traces = append(traces, tr)
		if p := tr.Validate(); len(p) > 0 {
			t.Errorf("trace %s invalid: %v", tr.ID, p)
		}
		if ids[tr.ID] {
			t.Errorf("id %q emitted twice", tr.ID)
		}
		ids[tr.ID] = true
		for _, fd := range tr.Findings {
			if err := fd.CheckEvidence(tr); err != nil {
				t.Errorf("trace %s: %v", tr.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("Decode: %v", err)
	}
	return traces
}

// headKeys keeps a few heads: heads asked for in turn, as several workers
// sniff, each get their own keys.
func TestHeadKeysOfHeadsInTurn(t *testing.T) {
	heads := []string{`{"a":"1"}`, `{"b":"2"}`, `[{"c":"3"}]`, `{"d":"4"}`, `{"e":"5"}`, `{"a":"1"}`}
	for round := range 2 {
		for _, h := range heads {
			keys := headKeys([]byte(h), 0)
			if len(keys) != 1 || !strings.Contains(h, `"`+slices.Collect(maps.Keys(keys))[0]+`"`) {
				t.Errorf("round %d: keys of %s: %v", round, h, keys)
			}
		}
	}
}
