package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/shared"
	"github.com/faultline/faultline/trace"
)

// decodeMAD runs the MAD format over r and collects traces and issues,
// failing on traces that break the model's invariants.
func decodeMAD(t testing.TB, path string, r io.Reader) ([]*trace.Trace, []Issue) {
	t.Helper()
	return decodeWith(t, MAD{}, path, r)
}

func findingsOf(tr *trace.Trace, source string) map[string]trace.Finding {
	out := map[string]trace.Finding{}
	for _, f := range tr.Findings {
		if f.Source == source {
			out[f.Mode+"|"+f.RawLabel] = f
		}
	}
	return out
}

func issueTexts(issues []Issue, severity Severity) []string {
	var out []string
	for _, i := range issues {
		if i.Severity == severity {
			out = append(out, i.String())
		}
	}
	return out
}

func TestMADSniff(t *testing.T) {
	longTrace := `[{"mas_name": "ChatDev", "trace": "` + strings.Repeat("x", 200) // cut inside the trajectory
	tests := []struct {
		name string
		head string
		want bool
	}{
		{"human file", `[{"round": "Round 1", "mas_name": "AppWorld", "trace_id": 0, "trace": "...", "annotations": []}]`, true},
		{"NaN before the keys", `[{"annotator_1": NaN, "mas_name": "A", "trace": "t"}]`, true},
		{"cut inside the trace", longTrace, true},
		{"full dataset", `[{"mas_name": "MetaGPT", "llm_name": "gpt-4o", "trace": {"key": "k", "trajectory": "...`, true},
		{"single record", "\xef\xbb\xbf\n {\"mas_name\": \"AG2\", \"trace\": \"{}\"}", true},
		{"JSON lines", "{\"mas_name\": \"AG2\", \"trace\": \"a\"}\n{\"mas_name\": \"AG2\", \"trace\": \"b\"}\n", true},
		{"no trace", `[{"mas_name": "AG2", "trajectory": "a"}]`, false},
		{"no mas_name", `[{"trace": "a"}]`, false},
		{"keys deeper down", `[{"x": {"mas_name": "A", "trace": "t"}}]`, false},
		{"codex rollout", `{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}`, false},
		{"not JSON", `mas_name trace`, false},
		{"empty", ``, false},
	}
	for _, tt := range tests {
		if got := (MAD{}).Sniff([]byte(tt.head)); got != tt.want {
			t.Errorf("%s: Sniff = %v, want %v", tt.name, got, tt.want)
		}
	}
	if f, ok := Detect([]byte(tests[0].head)); !ok || f.Name() != "mad" {
		t.Errorf("Detect picks %v for a MAD file", f)
	}
}

func TestMADSniffAnyCut(t *testing.T) {
	// The head may end anywhere once the trajectory has begun, even inside
	// an escape sequence.
	data, err := os.ReadFile(shared.Path(t, "samples/ag2/raw_ag2_records.json"))
	if err != nil {
		t.Fatal(err)
	}
	from := bytes.Index(data, []byte(`"trace": "`)) + len(`"trace": "`)
	limit := min(len(data), SniffSize)
	var cuts []int
	for end := from; end < limit; end += 61 {
		cuts = append(cuts, end)
	}
	for i := from; i+1 < limit; i++ {
		if data[i] == '\\' && data[i+1] == 'u' {
			for k := 1; k <= 6 && i+k < limit; k++ {
				cuts = append(cuts, i+k)
			}
		}
	}
	for _, end := range cuts {
		if !(MAD{}).Sniff(data[:end]) {
			t.Fatalf("Sniff rejects the file cut at byte %d: …%q", end, data[end-20:end])
		}
	}
}

// A small human-labelled file: two drafts' labels, a merged mode, a
// dropped mode, NaN cells and a NaN inside a trajectory string.
const madHumanSample = `[
  {
    "round": "Round 1",
    "mas_name": "AG2",
    "benchmark_name": "GSM-Plus",
    "trace_id": 0,
    "trace": "{\"instance_id\": \"q1\", \"problem_statement\": [\"Add 2 and 2. NaN\"], \"other_data\": {\"given\": NaN}, \"trajectory\": [{\"content\": [\"Go\"], \"role\": \"assistant\", \"name\": \"proxy\"}, {\"content\": [\"4\"], \"role\": \"user\", \"name\": \"assistant\"}]}",
    "annotations": [
      {"failure mode": "2.1 Unbatched repetitive execution\n\nRepeats.", "annotator_1": false, "annotator_2": true, "annotator_3": NaN},
      {"failure mode": "2.2 Step repetition\n\nRepeats steps.", "annotator_1": false, "annotator_2": false, "annotator_3": NaN},
      {"failure mode": "3.1 Disagreement induced inaction\n\nStuck.", "annotator_1": true, "annotator_2": false, "annotator_3": false},
      {"failure mode": "1.5 Unaware of stopping conditions", "annotator_1": 1, "annotator_2": 0, "annotator_3": "maybe"},
      {"failure mode": "9.9 Something nobody defined", "annotator_1": NaN, "annotator_2": NaN, "annotator_3": NaN}
    ]
  },
  {
    "round": "Round 2",
    "mas_name": "AG2",
    "benchmark_name": "GSM-Plus",
    "trace_id": 0,
    "trace": "plain text trajectory",
    "annotations": []
  }
]
`

func TestMADHumanLabels(t *testing.T) {
	traces, issues := decodeMAD(t, "human.json", strings.NewReader(madHumanSample))
	if len(traces) != 2 {
		t.Fatalf("got %d traces, want 2; issues %v", len(traces), issues)
	}
	tr := traces[0]
	if tr.ID != "mad:AG2:0" || tr.Format != "mad" || tr.Source != "human.json#0" || tr.System != "AG2" || tr.Task != "Add 2 and 2. NaN" {
		t.Errorf("id/format/source/system/task = %q/%q/%q/%q/%q", tr.ID, tr.Format, tr.Source, tr.System, tr.Task)
	}
	wantMeta := map[string]string{"benchmark": "GSM-Plus", "round": "Round 1", "mad_trace_id": "0", "framework": "ag2", "instance_id": "q1"}
	for k, v := range wantMeta {
		if tr.Meta[k] != v {
			t.Errorf("meta %s = %q, want %q", k, tr.Meta[k], v)
		}
	}
	if len(tr.Steps) != 2 || tr.Steps[0].Agent != "proxy" || tr.Steps[1].Text != "4" {
		t.Errorf("steps %+v", tr.Steps)
	}
	if traces[1].ID != "mad:AG2:0:Round 2" {
		t.Errorf("a repeated trace id should take the round: %q", traces[1].ID)
	}

	a1, a2, a3 := findingsOf(tr, "mad:annotator_1"), findingsOf(tr, "mad:annotator_2"), findingsOf(tr, "mad:annotator_3")
	// Two draft rows merged into FM-1.3: present if any is.
	if f := a1["FM-1.3|2.1 Unbatched repetitive execution; 2.2 Step repetition"]; f.Verdict != trace.Absent || f.Taxonomy != "mast-v3" {
		t.Errorf("annotator_1 FM-1.3 = %+v, want absent from both rows", f)
	}
	if f := a2["FM-1.3|2.1 Unbatched repetitive execution"]; f.Verdict != trace.Present {
		t.Errorf("annotator_2 FM-1.3 = %+v, want present from the unbatched row", f)
	}
	// NaN is no answer: no finding at all.
	if len(a3) != 1 {
		t.Errorf("annotator_3 findings %v, want only the dropped mode", a3)
	}
	// A dropped draft mode is kept unmapped, with its label.
	if f := a1["|3.1 Disagreement induced inaction"]; f.Verdict != trace.Present || f.Taxonomy != "" {
		t.Errorf("annotator_1 dropped mode = %+v", f)
	}
	if f := a3["|3.1 Disagreement induced inaction"]; f.Verdict != trace.Absent {
		t.Errorf("annotator_3 dropped mode = %+v", f)
	}
	// 1/0 are verdicts too; "maybe" is not.
	if a1["FM-1.5|1.5 Unaware of stopping conditions"].Verdict != trace.Present || a2["FM-1.5|1.5 Unaware of stopping conditions"].Verdict != trace.Absent {
		t.Errorf("numeric verdicts: %v / %v", a1, a2)
	}
	if len(tr.Findings) != 3+3+1 {
		t.Errorf("got %d findings, want 7: %+v", len(tr.Findings), tr.Findings)
	}

	errs, notices := issueTexts(issues, Error), issueTexts(issues, Notice)
	if len(errs) != 1 || !strings.Contains(errs[0], `annotator_3 value "maybe" is not a verdict`) || !strings.HasPrefix(errs[0], "human.json:2: record 0 (line 2)") {
		t.Errorf("errors %q", errs)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], `2 label(s) not mapped`) ||
		!strings.Contains(notices[0], `"3.1 Disagreement induced inaction" (a draft mode dropped from the final taxonomy)`) ||
		!strings.Contains(notices[0], `"9.9 Something nobody defined" (unknown label)`) {
		t.Errorf("notices %q", notices)
	}
}

func TestMADFullDatasetRecord(t *testing.T) {
	// One record, not in an array, in the full dataset's shape.
	rec := `{"mas_name": "Magentic-One", "llm_name": "gpt-4o", "benchmark_name": "GAIA", "trace_id": 7,
	 "trace": {"key": "k7", "index": 3, "trajectory": "---------- user ----------\nFind X\n---------- Coder ----------\nX is 1"},
	 "mast_annotation": {"3.3": 1, "1.1": 0, "1.10": 1, "2.2": null}}`
	traces, issues := decodeMAD(t, "full.json", strings.NewReader(rec))
	if len(traces) != 1 {
		t.Fatalf("got %d traces; issues %v", len(traces), issues)
	}
	tr := traces[0]
	if tr.ID != "mad:Magentic-One:7" || tr.Model != "gpt-4o" || tr.Task != "Find X" || tr.Meta["mad_key"] != "k7" || tr.Meta["mad_index"] != "3" {
		t.Errorf("id/model/task/meta = %q/%q/%q/%v", tr.ID, tr.Model, tr.Task, tr.Meta)
	}
	if len(tr.Steps) != 2 || tr.Steps[1].Agent != "Coder" {
		t.Errorf("steps %+v", tr.Steps)
	}
	want := []trace.Finding{
		{Mode: "FM-1.1", Source: "mad:llm", Verdict: trace.Absent, Taxonomy: "mast-v3"},
		{Mode: "FM-3.3", Source: "mad:llm", Verdict: trace.Present, Taxonomy: "mast-v3"},
		{Mode: "", Source: "mad:llm", Verdict: trace.Present, RawLabel: "1.10"},
	}
	if fmt.Sprint(tr.Findings) != fmt.Sprint(want) {
		t.Errorf("findings %+v, want %+v", tr.Findings, want)
	}
	if n := issueTexts(issues, Notice); len(n) != 1 || !strings.Contains(n[0], `"1.10" (unknown label)`) {
		t.Errorf("notices %q", n)
	}
}

func TestMADAnnotationAsString(t *testing.T) {
	// Some exports keep mast_annotation as a JSON string.
	rec := `{"mas_name": "ChatDev", "trace_id": "a", "trace": "text", "mast_annotation": "{\"1.3\": 1}"}`
	traces, _ := decodeMAD(t, "s.json", strings.NewReader(rec))
	if len(traces) != 1 || len(traces[0].Findings) != 1 || traces[0].Findings[0].Mode != "FM-1.3" {
		t.Fatalf("findings %+v", traces)
	}
}

func TestMADBadRecordsAreReportedAndSkipped(t *testing.T) {
	content := `[
{"mas_name": "AG2", "trace_id": 1, "trace": "ok one"},
{"mas_name": "AG2", "trace_id": 2,
 "trace": 42},
{"mas_name": "AG2", "trace_id": 3, "trace": "x",
 "annotations": [{"failure mode": "1.3 Step repetition", "annotator_1": true}],
 "round": ["r"]},
{"mas_name": 5, "trace": "x"},
{"mas_name": "AG2", "trace_id": 5,
 "annotations": {"not": "a list"}, "trace": "x"},
{"mas_name": "AG2", "trace_id": 6},
"not a record",
{"mas_name": "AG2", "trace_id": 7, "trace": "ok two", "mast_annotation": [1]},
{"mas_name": "AG2", "trace_id": 8, "trace": "ok three", "annotations": [{"annotator_1": true}, {"failure mode": "1.3 Step repetition", "annotator_1": true, "comment": "x"}]}
]`
	traces, issues := decodeMAD(t, "bad.json", strings.NewReader(content))
	var ids []string
	for _, tr := range traces {
		ids = append(ids, tr.ID)
	}
	if strings.Join(ids, " ") != "mad:AG2:1 mad:AG2:7 mad:AG2:8" {
		t.Errorf("ids %v", ids)
	}
	errs := issueTexts(issues, Error)
	want := []string{
		`bad.json:3: record 1 (line 3): field "trace" should be a string or an object, found a number; record skipped`,
		`bad.json:5: record 2 (line 5): field "round" should be a string or a number, found an array; record skipped`,
		`bad.json:8: record 3 (line 8): field "mas_name" should be a string, found a number; record skipped`,
		`bad.json:10: record 4 (line 9): field "annotations" should be an array, found an object; record skipped`,
		`bad.json:11: record 5 (line 11): no trace; record skipped`,
		`bad.json:12: record 6 (line 12): a record should be an object, found a string; record skipped`,
		`bad.json:13: record 7 (line 13): field "mast_annotation" should be an object of codes, found an array; labels skipped`,
		`bad.json:14: record 8 (line 14): annotation 0 has no "failure mode" label; row skipped`,
	}
	if strings.Join(errs, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(errs, "\n"), strings.Join(want, "\n"))
	}
	if n := issueTexts(issues, Notice); len(n) != 1 || !strings.Contains(n[0], "annotation fields comment are not labels") {
		t.Errorf("notices %q", n)
	}
}

func TestMADBrokenFileKeepsWhatWasRead(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    string // the error issue
	}{
		{"truncated", "[\n{\"mas_name\": \"A\", \"trace_id\": 1, \"trace\": \"t\"},\n{\"mas_name\": \"A\", \"trace\": \"cut",
			"cut.json:3: truncated JSON: the file ends inside a record; reading stopped after 1 records"},
		{"syntax error", "[\n{\"mas_name\": \"A\", \"trace_id\": 1, \"trace\": \"t\"},\n{\"mas_name\": \"A\",\n \"trace\": oops}]",
			"cut.json:4: invalid JSON: invalid character 'o' looking for beginning of value; reading stopped after 1 records"},
	}
	for _, tt := range tests {
		traces, issues := decodeMAD(t, "cut.json", strings.NewReader(tt.content))
		if len(traces) != 1 || traces[0].ID != "mad:A:1" {
			t.Errorf("%s: traces %v", tt.name, traces)
		}
		if errs := issueTexts(issues, Error); len(errs) != 1 || errs[0] != tt.want {
			t.Errorf("%s: errors %q, want %q", tt.name, errs, tt.want)
		}
	}
}

func TestMADJSONLinesAndUniqueIDs(t *testing.T) {
	content := `{"mas_name": "X", "trace_id": 1, "trace": "a"}
{"mas_name": "X", "trace_id": 1, "trace": "b"}
{"mas_name": "X", "trace_id": 1, "trace": "c", "round": "R"}
{"mas_name": "X", "trace_id": 1, "trace": "d", "round": "R"}
{"mas_name": "", "trace": "e"}
`
	traces, _ := decodeMAD(t, "l.jsonl", strings.NewReader(content))
	var ids []string
	for _, tr := range traces {
		ids = append(ids, tr.ID)
	}
	want := "mad:X:1 mad:X:1#1 mad:X:1:R mad:X:1:R#3 mad:unknown:record4"
	if strings.Join(ids, " ") != want {
		t.Errorf("ids %q, want %q", strings.Join(ids, " "), want)
	}
}

func TestMADEmitErrorStops(t *testing.T) {
	stop := fmt.Errorf("store full")
	in := &Input{Path: "x", R: strings.NewReader(madHumanSample), report: func(Issue) {}}
	calls := 0
	err := MAD{}.Decode(context.Background(), in, func(*trace.Trace) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Errorf("err %v after %d emits, want %v after 1", err, calls, stop)
	}
}

// madHumanWant is what each record of the human-labelled file holds:
// the framework its trajectory is in and how many of its label rows name
// draft modes that were dropped from the final taxonomy.
var madHumanWant = []struct {
	framework string
	dropped   int
}{
	{"appworld", 2}, {"hyperagent", 2}, {"ag2", 2}, {"chatdev", 2}, {"metagpt", 2},
	{"appworld", 1}, {"hyperagent", 1}, {"ag2", 1}, {"chatdev", 1}, {"metagpt", 1},
	{"hyperagent", 1}, {"appworld", 1}, {"ag2", 1}, {"chatdev", 1}, {"metagpt", 1},
	{"chatdev", 0}, {"metagpt", 0}, {"magentic-one", 0}, {"openmanus", 0},
}

func TestMADHumanLabelledFile(t *testing.T) {
	path := shared.Path(t, "mast/MAD_human_labelled_dataset.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head := data[:min(len(data), SniffSize)]
	if f, ok := Detect(head); !ok || f.Name() != "mad" {
		t.Fatalf("Detect = %v, %v", f, ok)
	}
	traces, issues := decodeMAD(t, path, bytes.NewReader(data))
	if errs := issueTexts(issues, Error); len(errs) > 0 {
		t.Errorf("errors: %q", errs)
	}
	if len(traces) != len(madHumanWant) {
		t.Fatalf("got %d traces, want %d", len(traces), len(madHumanWant))
	}
	// The same traces whatever the Read boundaries.
	chunked, _ := decodeMAD(t, path, &chunkReader{data: data, n: 7})
	if a, b := fmt.Sprint(traceSummary(traces)), fmt.Sprint(traceSummary(chunked)); a != b {
		t.Errorf("7-byte reads change the result")
	}

	counts := map[string]int{}
	ids := map[string]bool{}
	notices := issueTexts(issues, Notice)
	for i, tr := range traces {
		w := madHumanWant[i]
		if ids[tr.ID] {
			t.Errorf("id %s repeats", tr.ID)
		}
		ids[tr.ID] = true
		if tr.Meta["framework"] != w.framework || len(tr.Steps) < 2 {
			t.Errorf("record %d: framework %q with %d steps, want %q split", i, tr.Meta["framework"], len(tr.Steps), w.framework)
		}
		if tr.Meta["mad_trace_id"] != fmt.Sprint(i) || tr.Meta["round"] == "" || tr.Meta["benchmark"] == "" {
			t.Errorf("record %d: meta %v", i, tr.Meta)
		}
		if tr.Task == "" && w.framework != "openmanus" {
			t.Errorf("record %d (%s): no task found", i, w.framework)
		}
		unmapped := 0
		for _, f := range tr.Findings {
			switch {
			case f.Mode == "":
				unmapped++
				counts["unmapped"]++
			case f.Taxonomy != "mast-v3" || f.RawLabel == "":
				t.Errorf("record %d: finding %+v lacks taxonomy or raw label", i, f)
			}
			counts[string(f.Verdict)]++
		}
		// Each dropped row is answered by all three annotators.
		if unmapped != 3*w.dropped {
			t.Errorf("record %d: %d unmapped findings, want %d", i, unmapped, 3*w.dropped)
		}
		line := fmt.Sprintf("record %d (line ", i)
		found := 0
		for _, n := range notices {
			if strings.Contains(n, line) && strings.Contains(n, "a draft mode dropped from the final taxonomy") {
				found++
			}
		}
		if found != min(w.dropped, 1) {
			t.Errorf("record %d: %d notices about dropped modes, want %d", i, found, min(w.dropped, 1))
		}
		t.Logf("record %2d %-10s %-12s %4d steps  %d findings", i, tr.System, w.framework, len(tr.Steps), len(tr.Findings))
	}
	t.Logf("findings: %d present, %d absent, %d of them unmapped", counts["present"], counts["absent"], counts["unmapped"])

	// Record 0 (AppWorld): "1.5 Unaware of stopping conditions" is true for all three.
	for _, a := range []string{"mad:annotator_1", "mad:annotator_2", "mad:annotator_3"} {
		f, ok := findingsOf(traces[0], a)["FM-1.5|1.5 Unaware of stopping conditions"]
		if !ok || f.Verdict != trace.Present {
			t.Errorf("record 0 %s FM-1.5 = %+v", a, f)
		}
	}
	// Record 18: annotator_3 left 3.2 and 3.3 unanswered (NaN).
	for mode, want := range map[string]bool{"FM-3.2": false, "FM-3.3": false, "FM-1.1": true} {
		got := false
		for _, f := range traces[18].Findings {
			got = got || f.Source == "mad:annotator_3" && f.Mode == mode
		}
		if got != want {
			t.Errorf("record 18 annotator_3 has %s: %v, want %v", mode, got, want)
		}
	}
	if n := len(traces[18].Findings); n != 14*3-2 {
		t.Errorf("record 18: %d findings, want 40", n)
	}
}

// traceSummary is what two decodings of one file must agree on.
func traceSummary(traces []*trace.Trace) []string {
	var out []string
	for _, tr := range traces {
		b, _ := json.Marshal(tr)
		out = append(out, string(b))
	}
	return out
}

func TestMADTextIsPreservedInRealTraces(t *testing.T) {
	path := shared.Path(t, "mast/MAD_human_labelled_dataset.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []struct {
		MASName       string `json:"mas_name"`
		BenchmarkName string `json:"benchmark_name"`
		Trace         string `json:"trace"`
	}
	if err := json.Unmarshal(sanitizeJSON(data), &recs); err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		text := r.Trace
		var doc madDocument
		if json.Unmarshal([]byte(r.Trace), &doc) == nil {
			var lines []string
			switch {
			case json.Unmarshal(doc.Trajectory, &lines) == nil:
				text = strings.Join(lines, "\n")
			case json.Unmarshal(doc.Content, &text) == nil:
			default:
				continue // chat messages: checked message by message in TestSplitAG2Chat
			}
		}
		s := splitMADText(text, []string{r.MASName, r.BenchmarkName})
		log := madLogFor(s.framework, text)
		if log == nil {
			t.Errorf("record %d: framework %q not recognised", i, s.framework)
			continue
		}
		checkPreserved(t, text, log, s.steps)
	}
}

func TestMADAG2Samples(t *testing.T) {
	path := shared.Path(t, "samples/ag2/raw_ag2_records.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	traces, issues := decodeMAD(t, path, f)
	if len(issues) > 0 {
		t.Errorf("issues: %v", issues)
	}
	wantSteps := []int{4, 5, 4, 7, 12, 4, 3, 4}
	if len(traces) != len(wantSteps) {
		t.Fatalf("got %d traces, want %d", len(traces), len(wantSteps))
	}
	for i, tr := range traces {
		if len(tr.Steps) != wantSteps[i] || tr.Meta["framework"] != "ag2" || tr.Task == "" || !strings.HasPrefix(tr.ID, "mad:AG2:") || tr.Meta["round"] == "" {
			t.Errorf("trace %d %s: %d steps (want %d), framework %q, task %q", i, tr.ID, len(tr.Steps), wantSteps[i], tr.Meta["framework"], tr.Task)
		}
		for _, s := range tr.Steps {
			if s.Agent != "Planner" && s.Agent != "Coder" && s.Agent != "Tester" {
				t.Errorf("trace %s step %d: agent %q", tr.ID, s.Index, s.Agent)
			}
		}
	}
}

// madRecordStream produces a JSON array of n generated records without
// holding more than one in memory.
type madRecordStream struct {
	n, i int
	buf  []byte
	body string // the trajectory, already a JSON string
}

func (s *madRecordStream) Read(p []byte) (int, error) {
	for len(s.buf) == 0 {
		switch {
		case s.i == 0:
			s.buf = append(s.buf, '[')
		case s.i <= s.n:
			if s.i > 1 {
				s.buf = append(s.buf, ",\n"...)
			}
			s.buf = fmt.Appendf(s.buf, `{"mas_name": "ChatDev", "trace_id": %d, "trace": %s, "mast_annotation": {"1.1": 1, "3.3": NaN}}`, s.i, s.body)
		case s.i == s.n+1:
			s.buf = append(s.buf, "]\n"...)
		default:
			return 0, io.EOF
		}
		s.i++
	}
	k := copy(p, s.buf)
	s.buf = s.buf[k:]
	return k, nil
}

func TestMADMemoryStaysFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 24 MB")
	}
	var entry strings.Builder
	for entry.Len() < 48<<10 {
		entry.WriteString("[2025-17-01 11:36:43 INFO] Programmer: **turn**\n")
		entry.WriteString(strings.Repeat("    some code of the programmer's, line after line\n", 20))
	}
	const n = 500 // 24 MB in all
	body, _ := json.Marshal(entry.String())
	src := &madRecordStream{n: n, body: string(body)}
	in := &Input{Path: "big.json", R: src, report: func(i Issue) { t.Errorf("issue: %v", i) }}
	var peak uint64
	var ms runtime.MemStats
	count := 0
	err := MAD{}.Decode(context.Background(), in, func(tr *trace.Trace) error {
		count++
		if count%50 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
		return nil
	})
	if err != nil || count != n {
		t.Fatalf("err %v, %d traces", err, count)
	}
	// A record is 48 KB; the file would be 24 MB.
	if peak > 8<<20 {
		t.Errorf("live heap reached %d MB while streaming 24 MB", peak>>20)
	}
	t.Logf("peak live heap %d KB", peak>>10)
}

func FuzzMAD(f *testing.F) {
	f.Add([]byte(madHumanSample))
	f.Add([]byte(`[{"mas_name": "A", "trace": "x", "annotations": [{"failure mode": "1.3 Step repetition", "annotator_1": NaN}]}]`))
	f.Add([]byte(`{"mas_name": "M", "trace": {"key": 1, "trajectory": "---------- a ----------\nhi"}, "mast_annotation": {"1.1": 1}}`))
	f.Add([]byte("{\"mas_name\": \"C\", \"trace\": \"[2025-17-01 11:36:43 INFO] Programmer: x\\n| **user_role_name** | P |\"}\n{\"mas_name\": \"C\", \"trace\": 3}"))
	f.Add([]byte(`[{"mas_name": "H", "trace": "{\"trajectory\": [\"HyperAgent_x - INFO - Planner's Response: a\", \"b\"]}"}, -Infinity]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		MAD{}.Sniff(data)
		in := &Input{Path: "fuzz.json", R: bytes.NewReader(data), report: func(Issue) {}}
		ids := map[string]bool{}
		err := MAD{}.Decode(context.Background(), in, func(tr *trace.Trace) error {
			if p := tr.Validate(); len(p) > 0 {
				t.Errorf("trace %s invalid: %v", tr.ID, p)
			}
			if ids[tr.ID] {
				t.Errorf("id %s emitted twice", tr.ID)
			}
			ids[tr.ID] = true
			return nil
		})
		if err != nil {
			t.Errorf("Decode: %v", err)
		}
		fuzzLimited(t, MAD{}, data)
	})
}
