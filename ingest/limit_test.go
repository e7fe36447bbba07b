package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

func TestLimitText(t *testing.T) {
	long := strings.Repeat("abcdefghij", 10) // 100 bytes
	runes := strings.Repeat("é", 50)         // 100 bytes, 2 a rune
	marked := long[:20] + cutMarker(1000) + long[:20]
	tests := []struct {
		name     string
		in       string
		limit    int
		want     string
		size     int64
		wasShort bool // not cut, here or before
	}{
		{name: "within the limit", in: long, limit: 100, want: long, size: 100, wasShort: true},
		{name: "over it", in: long, limit: 40, want: long[:20] + cutMarker(60) + long[80:], size: 100},
		{name: "at runes", in: runes, limit: 41, want: runes[:20] + cutMarker(60) + runes[80:], size: 100},
		{name: "cut as it streamed, within the limit", in: marked, limit: 40, want: marked, size: 1040},
		{name: "cut as it streamed, over the limit", in: marked + long, limit: 40,
			want: long[:20] + cutMarker(1000+20+80) + long[80:], size: 1140},
		{name: "a mark the cut would split stays whole", in: long[:18] + cutMarker(7) + long, limit: 40,
			want: long[:18] + cutMarker(7+100-20) + long[80:], size: 125},
		{name: "text that only looks like a mark", in: cutMarkerPrefix + "x" + cutMarkerSuffix, limit: 100,
			want: cutMarkerPrefix + "x" + cutMarkerSuffix, size: int64(len(cutMarkerPrefix + "x" + cutMarkerSuffix)), wasShort: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, size, cut := limitText(tc.in, tc.limit)
			if got != tc.want || size != tc.size || cut == tc.wasShort {
				t.Errorf("limitText = %q, %d, %v\nwant        %q, %d, %v", got, size, cut, tc.want, tc.size, !tc.wasShort)
			}
			if _, again, _ := limitText(got, tc.limit); again != tc.size {
				t.Errorf("the size read back from the cut text is %d, want %d", again, tc.size)
			}
		})
	}
}

func TestLimitTrace(t *testing.T) {
	long := strings.Repeat("x", 100)
	tr := &trace.Trace{Task: long, Steps: []trace.Step{{Text: "short"}, {Text: long, Args: long[:50] + cutMarker(10)}}}
	limitTrace(tr, 60)
	if tr.Meta[CutTextsMeta] != "task=100 step1.text=100 step1.args=60" || tr.Meta[TextLimitMeta] != "60" {
		t.Errorf("meta %v", tr.Meta)
	}
	if tr.Steps[0].Text != "short" || !strings.Contains(tr.Steps[1].Text, cutMarker(40)) || len(tr.Task) != 60+len(cutMarker(40)) {
		t.Errorf("steps %+v, task %q", tr.Steps, tr.Task)
	}
	whole := &trace.Trace{Task: long}
	limitTrace(whole, 0)
	if whole.Task != long || whole.Meta != nil {
		t.Errorf("no limit cut: %+v", whole)
	}
}

// checkLimited fails on a text of tr longer than limit bytes of its own,
// or cut without its size in the meta.
func checkLimited(t testing.TB, tr *trace.Trace, limit int) {
	t.Helper()
	check := func(where, s string) {
		marks, markBytes, _ := cutMarks(s)
		// A cut may keep a rune's bytes beyond the half; JSON holding texts
		// cut as it streamed keeps up to nestedCap limits.
		bound := limit + 2*utf8Max*(len(marks)+1)
		if len(marks) > 0 && json.Valid([]byte(s)) {
			bound = nestedCap * limit
		}
		if own := len(s) - markBytes; own > bound {
			t.Errorf("trace %s %s keeps %d bytes, limit %d", tr.ID, where, own, limit)
		}
		if len(marks) > 0 && !strings.Contains(" "+tr.Meta[CutTextsMeta], " "+where+"=") {
			t.Errorf("trace %s %s was cut, but the meta says %q", tr.ID, where, tr.Meta[CutTextsMeta])
		}
	}
	check("task", tr.Task)
	for i, s := range tr.Steps {
		check("step"+strconv.Itoa(i)+".text", s.Text)
		check("step"+strconv.Itoa(i)+".args", s.Args)
	}
}

const utf8Max = 4

// decodeLimited decodes data with a text limit.
func decodeLimited(t *testing.T, f Format, data []byte, limit int) ([]*trace.Trace, []Issue) {
	t.Helper()
	var issues []Issue
	var traces []*trace.Trace
	in := &Input{Path: "limited", R: bytes.NewReader(data), limit: limit, report: func(i Issue) { issues = append(issues, i) }}
	if err := f.Decode(context.Background(), in, func(tr *trace.Trace) error {
		traces = append(traces, tr)
		return nil
	}); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	for _, tr := range traces {
		if p := tr.Validate(); len(p) > 0 {
			t.Errorf("trace %s invalid: %v", tr.ID, p)
		}
	}
	return traces, issues
}

// Every format cuts a text over the limit to its head and tail, records
// its size, and reads the rest of the trace as it would without the cut.
func TestTextLimitEveryFormat(t *testing.T) {
	const limit = 256
	long := strings.Repeat("error: connection refused ", 200) // 5,200 bytes
	otlp, err := os.ReadFile(filepath.Join("testdata", "otlp", "genai_current.json"))
	if err != nil {
		t.Fatal(err)
	}
	inspectLog := `{"version": 2, "eval": {"eval_id": "E1", "model": "m"}, "samples": [` + inspectSamples[0] + `]}`
	tests := []struct {
		name     string
		format   Format
		data     string
		old, new string
		check    func(t *testing.T, s trace.Step)
	}{
		{name: "codex shell output keeps its exit code", format: Codex{}, data: codexSample,
			old: `{\"output\":\"\",\"metadata\":{\"exit_code\":1`, new: `{\"output\":\"` + long + `\",\"metadata\":{\"exit_code\":1`,
			check: func(t *testing.T, s trace.Step) {
				if s.Type != "shell" || s.ExitCode == nil || *s.ExitCode != 1 || !s.IsError {
					t.Errorf("shell output read as %s, exit %v, error %v", s.Type, s.ExitCode, s.IsError)
				}
			}},
		{name: "codex MCP output", format: Codex{}, data: codexSample, old: `3 alerts firing`, new: long,
			check: func(t *testing.T, s trace.Step) {
				if s.Type != "mcp" {
					t.Errorf("MCP output read as %s", s.Type)
				}
			}},
		{name: "codex arguments stay JSON", format: Codex{}, data: codexSample, old: `[\"false\"]`, new: `[\"` + long + `\"]`,
			check: func(t *testing.T, s trace.Step) {
				if !json.Valid([]byte(s.Args)) {
					t.Errorf("arguments no longer JSON: %s", s.Args)
				}
			}},
		{name: "openai chat", format: OpenAIChat{}, data: chatShapes, old: `"a.txt"`, new: `"` + long + `"`},
		{name: "inspect log", format: InspectAI{}, data: inspectLog, old: `"flag.txt"`, new: `"` + long + `"`},
		{name: "inspect archive", format: InspectAI{}, data: string(inspectArchiveBytes(t, [2]string{"header.json", inspectHeaderJSON},
			[2]string{"samples/1_epoch_1.json", strings.Replace(inspectSamples[0], `"flag.txt"`, `"`+long+`"`, 1)}))},
		{name: "inspect attachment", format: InspectAI{}, data: inspectLog, old: `"You are a CTF player."`, new: `"` + long + `"`},
		{name: "atif", format: ATIF{}, data: atifSample, old: `"1.5M shares"`, new: `"` + long + `"`},
		{name: "docent", format: Docent{}, data: docentRuns, old: `"Cancel my trip."`, new: `"` + long + `"`},
		{name: "magentic-one", format: MagenticOne{}, data: magenticLogSample, old: `"The character is k."`, new: `"` + long + `"`},
		{name: "tau-bench", format: TauBench{}, data: tauResults, old: `"Book me a flight."`, new: `"` + long + `"`},
		{name: "who&when", format: WhoWhen{}, data: whoWhenAG2, old: `Code output: 4`, new: `Code output: ` + long},
		{name: "MAD trajectory split before its steps are cut", format: MAD{},
			data: `{"mas_name": "M", "trace": {"key": 1, "trajectory": "---------- a ----------\n` + long[:2000] + `\n---------- b ----------\nshort reply"}}`},
		{name: "otlp-json message in a JSON attribute", format: OTLPJSON{}, data: string(otlp), old: `Checkout latency spiked at 14:02. Find the root cause.`, new: long},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.data
			if tc.old != "" {
				data = strings.Replace(data, tc.old, tc.new, 1)
				if data == tc.data {
					t.Fatal("sample changed; fix the test")
				}
			}
			traces, issues := decodeLimited(t, tc.format, []byte(data), limit)
			_, before := decodeLimited(t, tc.format, []byte(tc.data), limit)
			if errs := issueTexts(issues, Error); len(errs) != len(issueTexts(before, Error)) {
				t.Errorf("errors: %q, before the long text %q", errs, issueTexts(before, Error))
			}
			var cut *trace.Step
			for _, tr := range traces {
				checkLimited(t, tr, limit)
				for i := range tr.Steps {
					if s := &tr.Steps[i]; cut == nil && (strings.Contains(s.Text, cutMarkerPrefix) || strings.Contains(s.Args, cutMarkerPrefix)) {
						cut = s
						if !strings.Contains(tr.Meta[CutTextsMeta], "step"+strconv.Itoa(i)+".") {
							t.Errorf("meta %q does not list step %d", tr.Meta[CutTextsMeta], i)
						}
					}
				}
			}
			if cut == nil {
				t.Fatalf("no step was cut")
			}
			if tc.check != nil {
				tc.check(t, *cut)
			}
			if tc.format.Name() == "mad" {
				last := traces[0].Steps[len(traces[0].Steps)-1]
				if last.Text != "short reply" {
					t.Errorf("the trajectory was cut before its steps: last step %q", last.Text)
				}
			}
		})
	}
}

// A tool output of a size real traces have (650 KB: an MCP diff of
// Kubernetes specs) stays whole under the default limit.
func TestTextLimitKeepsRealOutputsWhole(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 650_000; i++ {
		b.WriteString(`  \"resourceVersion\": \"` + strconv.Itoa(i) + `\",\n`)
	}
	output := b.String()
	data := strings.Replace(codexSample, `3 alerts firing`, output, 1)
	traces, _ := decodeString(t, Codex{}, data)
	for _, s := range traces[0].Steps {
		if s.Type == "mcp" && len(s.Text) < 650_000 {
			t.Errorf("the output was cut to %d bytes", len(s.Text))
		}
	}
	if cut := traces[0].Meta[CutTextsMeta]; cut != "" {
		t.Errorf("cut: %s", cut)
	}
}

// Options.TextLimit reaches the formats through Paths.
func TestPathsTextLimit(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("0123456789", 1000)
	write(t, dir, "a.jsonl", strings.Replace(codexSample, `3 alerts firing`, long, 1))
	for _, tc := range []struct {
		limit int
		cut   bool
	}{{0, false}, {-1, false}, {1000, true}} {
		traces, _, err := ReadAll(context.Background(), []string{dir}, Options{TextLimit: tc.limit})
		if err != nil || len(traces) != 1 {
			t.Fatalf("limit %d: %d traces, %v", tc.limit, len(traces), err)
		}
		if got := traces[0].Meta[CutTextsMeta] != ""; got != tc.cut {
			t.Errorf("limit %d: cut %v, want %v (%q)", tc.limit, got, tc.cut, traces[0].Meta[CutTextsMeta])
		}
	}
}
