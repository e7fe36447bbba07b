package labels

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/shared"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// show writes labels one a line, as "trace mode verdict [steps] @line", with
// "implied" for absences inferred from silence.
func show(ls []ModeLabel) string {
	var b strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&b, "%s %s %s", l.Trace, l.Mode, l.Verdict)
		if len(l.Steps) > 0 {
			fmt.Fprintf(&b, " %v", l.Steps)
		}
		if l.Implied {
			b.WriteString(" implied")
		} else {
			fmt.Fprintf(&b, " @%d", l.Line)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// issueLines writes issues one a line as "severity line: message".
func issueLines(issues []ingest.Issue) string {
	var b strings.Builder
	for _, i := range issues {
		fmt.Fprintf(&b, "%s %d: %s\n", i.Severity, i.Line, i.Message)
	}
	return b.String()
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, format, input string
		labels              string // show's form
		issues              []string
	}{
		{
			name:   "json array, silence is absence",
			format: "json",
			input: `[
  {"trace": "t1", "mode": "FM-1.3", "present": true, "steps": [9, 4, 4]},
  {"trace": "t1", "mode": "3.3", "present": false},
  {"trace": "t2", "mode": "Step repetition", "present": null, "note": "hard to say"}
]`,
			labels: "t1 FM-1.3 present [4 9] @2\nt1 FM-3.3 absent @3\nt2 FM-1.3 unsure @4\nt2 FM-3.3 absent implied\n",
		},
		{
			name:   "system codes label harness failures beside MAST modes",
			format: "json",
			input: `{"trace": "t1", "mode": "SYS-1", "present": true, "steps": [3]}
{"trace": "t2", "mode": "FM-3.1", "present": true}`,
			labels: "t1 FM-3.1 absent implied\nt1 SYS-1 present [3] @1\nt2 FM-3.1 present @2\nt2 SYS-1 absent implied\n",
		},
		{
			name:   "json lines: each bad line costs only itself",
			format: "json",
			input: `{"trace": "t1", "mode": "FM-1.3", "present": true}
{"trace": "t1", "mode": "FM-9.9", "present": true}
not json
{"trace": 5, "mode": "FM-1.1", "present": true}
{"trace": "t2", "mode": "FM-1.1", "present": "maybe"}
{"trace": "t2", "mode": "FM-1.1", "present": true, "steps": [-1]}
{"trace": "t2", "mode": "FM-1.1", "present": true, "steps": "4"}
{"trace": "t2", "mode": "FM-3.2 Incorrect verification", "present": true}
{"trace": "t2", "mode": "FM-1.1", "presnt": true}
[1]

{"trace": "t3", "mode": "FM-1.1", "present": "yes", "reviewer": "ann"}
`,
			labels: "t1 FM-1.1 absent implied\nt1 FM-1.3 present @1\nt3 FM-1.1 present @12\nt3 FM-1.3 absent implied\n",
			issues: []string{
				`notice 0: fields "reviewer" are not label fields (trace, mode, present, steps, quote, note); ignored`,
				`error 2: unknown mode "FM-9.9" (write a MAST code, FM-1.1 to FM-3.3, a mode's name, or a system code, SYS-1 to SYS-4); label skipped`,
				`error 3: bad JSON: invalid character 'o' in literal null (expecting 'u'); label skipped`,
				`error 4: field "trace" should be a string, found a number; label skipped`,
				`error 5: present is "maybe"; write true, false or unsure; label skipped`,
				`error 6: step -1: steps are numbered from 0; label skipped`,
				`error 7: field "steps" should be an array of step indices (whole numbers from 0), found "4"; label skipped`,
				`error 8: mode "FM-3.2 Incorrect verification": the code says FM-3.2 and the name FM-3.3; write the code or the name alone; label skipped`,
				`error 9: label has no "present" (true, false or null for unsure); skipped`,
				`error 10: a label should be a JSON object, found an array; skipped`,
			},
		},
		{
			name:   "json array: a syntax error stops the reading there",
			format: "json",
			input:  "[{\"trace\": \"a\", \"mode\": \"1.1\", \"present\": true},\n {\"trace\": \"b\" \"mode\": \"1.1\"},\n {\"trace\": \"c\", \"mode\": \"1.1\", \"present\": true}]",
			labels: "a FM-1.1 present @1\n",
			issues: []string{`error 2: bad JSON: invalid character '"' after object key:value pair; reading stopped after 1 labels`},
		},
		{
			name:   "json: not labels",
			format: "json",
			input:  `"just a string"`,
			issues: []string{"error 1: not a JSON array of labels or JSON Lines of labels"},
		},
		{
			name:   "contradiction is unsure, repetition merges",
			format: "json",
			input: `{"trace": "t", "mode": "FM-1.3", "present": true, "steps": [3]}
{"trace": "t", "mode": "FM-1.3", "present": true, "steps": [1]}
{"trace": "t", "mode": "FM-2.2", "present": true}
{"trace": "t", "mode": "FM-2.2", "present": false}
{"trace": "t", "mode": "FM-2.2", "present": true}
{"trace": "t", "mode": "FM-3.1", "present": false, "steps": [2]}`,
			labels: "t FM-1.3 present [1 3] @1\nt FM-2.2 unsure @3\nt FM-3.1 absent @6\n",
			issues: []string{
				`error 4: trace "t", FM-2.2: labelled absent here and present on line 3; counted as unsure`,
				`notice 6: steps and quotes say where a mode is; on a label that is not present they are ignored`,
			},
		},
		{
			name:   "csv with a byte-order mark, columns in any order, quoted cells",
			format: "csv",
			input:  "\ufeffMode, Trace ,present,steps,note,reviewer\nFM-1.3,t1,true,4;9,\"asks twice, then \"\"again\"\"\",ann\n1.5,t1,no,,,ann\nFM-1.3,t2,,,,ann\n",
			labels: "t1 FM-1.3 present [4 9] @2\nt1 FM-1.5 absent @3\nt2 FM-1.3 unsure @4\nt2 FM-1.5 absent implied\n",
			issues: []string{`notice 1: columns "reviewer" are not label fields (trace, mode, present, steps, quote, note); ignored`},
		},
		{
			name:   "csv: bad rows are skipped",
			format: "csv",
			input:  "trace,mode,present,steps\nt1,FM-1.1,true,2 7\nt1,FM-1.2,true\n,FM-1.1,true,\nt2,FM-1.1,true,x\nt2,FM-1.1,present,\"4\nt3,FM-1.1,absent,\n",
			labels: "t1 FM-1.1 present [2 7] @2\n",
			issues: []string{
				"error 3: row has 3 fields, the header 4; skipped",
				"error 4: no trace id; row skipped",
				`error 5: steps: "x" is not a step index (a whole number from 0); row skipped`,
				"error 6: bad CSV: extraneous or missing \" in quoted-field; row skipped",
			},
		},
		{
			name:   "csv: a header without the required columns reads nothing",
			format: "csv",
			input:  "id,failure,label\nt1,FM-1.1,true\n",
			issues: []string{`error 1: the header should name the columns trace, mode and present (steps and note are optional), found "id", "failure", "label"; no labels read`},
		},
		{
			name:   "csv: empty",
			format: "csv",
			issues: []string{"error 0: empty file: no header, no labels"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parse := ParseJSON
			if tt.format == "csv" {
				parse = ParseCSV
			}
			set, issues := parse("f", []byte(tt.input))
			checkSet(t, set, issues, []byte(tt.input))
			if got := show(set.Labels); got != tt.labels {
				t.Errorf("labels:\n%s\nwant\n%s", got, tt.labels)
			}
			want := ""
			for _, i := range tt.issues {
				want += i + "\n"
			}
			if got := issueLines(issues); got != want {
				t.Errorf("issues:\n%s\nwant\n%s", got, want)
			}
			for _, i := range issues {
				if i.Path != "f" {
					t.Errorf("issue path %q", i.Path)
				}
			}
		})
	}
}

// checkSet verifies what must hold of any set read from any input.
func checkSet(t *testing.T, set *Set, issues []ingest.Issue, input []byte) {
	t.Helper()
	seen := map[string]bool{}
	for _, l := range set.Labels {
		key := l.Trace + "\x00" + l.Mode
		if seen[key] {
			t.Errorf("%s %s labelled twice", l.Trace, l.Mode)
		}
		seen[key] = true
		if strings.TrimSpace(l.Trace) == "" {
			t.Errorf("label without a trace: %+v", l)
		}
		if m, _, ok := taxonomy.Lookup(l.Mode); !ok || m.Code != l.Mode {
			t.Errorf("label with mode %q", l.Mode)
		}
		switch l.Verdict {
		case trace.Present, trace.Absent, trace.Unsure:
		default:
			t.Errorf("label with verdict %q", l.Verdict)
		}
		if len(l.Steps) > 0 && l.Verdict != trace.Present {
			t.Errorf("steps on a label that is not present: %+v", l)
		}
		if !slices.IsSorted(l.Steps) || len(slices.Compact(slices.Clone(l.Steps))) != len(l.Steps) || slices.ContainsFunc(l.Steps, func(s int) bool { return s < 0 }) {
			t.Errorf("steps %v", l.Steps)
		}
		if l.Implied && (l.Verdict != trace.Absent || l.Line != 0) {
			t.Errorf("implied label %+v", l)
		}
	}
	if !slices.IsSortedFunc(set.Labels, func(a, b ModeLabel) int {
		return strings.Compare(a.Trace+"\x00"+a.Mode, b.Trace+"\x00"+b.Mode)
	}) {
		t.Error("labels not sorted")
	}
	lines := bytes.Count(input, []byte("\n")) + 1
	for _, i := range issues {
		if i.Line < 0 || i.Line > lines || i.Message == "" {
			t.Errorf("issue at line %d of %d: %q", i.Line, lines, i.Message)
		}
	}
}

func TestCheck(t *testing.T) {
	set, _ := ParseJSON("f", []byte(`{"trace": "t1", "mode": "FM-1.3", "present": true, "steps": [2, 5, 9]}
{"trace": "gone", "mode": "FM-1.3", "present": true}
{"trace": "gone", "mode": "FM-1.5", "present": true}
{"trace": "t2", "mode": "FM-1.5", "present": true, "steps": [0]}`))
	issues := set.Check(map[string]int{"t1": 6, "t2": 3})
	want := "t1 FM-1.3 present [2 5] @1\nt1 FM-1.5 absent implied\nt2 FM-1.3 absent implied\nt2 FM-1.5 present [0] @4\n"
	if got := show(set.Labels); got != want {
		t.Errorf("kept:\n%s\nwant\n%s", got, want)
	}
	wantIssues := "error 1: FM-1.3: trace \"t1\" has 6 steps (0 to 5); steps [9] ignored\n" +
		"error 2: trace \"gone\" is not in the database; its labels are skipped\n"
	if got := issueLines(issues); got != wantIssues {
		t.Errorf("issues:\n%s\nwant\n%s", got, wantIssues)
	}
}

// A MAD file of two records: three annotators, one of whom leaves a cell
// empty (NaN), and two draft rows that map to one final mode.
const madFile = `[
{"mas_name": "AG2", "benchmark_name": "b", "trace_id": 1, "round": 1, "trace": "hello",
 "annotations": [
  {"failure mode": "1.5 Step repetition\n\nredoes", "annotator_1": true, "annotator_2": true, "annotator_3": false},
  {"failure mode": "1.4 Unbatched repetitive execution", "annotator_1": false, "annotator_2": false, "annotator_3": true},
  {"failure mode": "3.3 Lack of result verification", "annotator_1": true, "annotator_2": false, "annotator_3": NaN},
  {"failure mode": "3.1 Disagreement induced inaction", "annotator_1": true, "annotator_2": true, "annotator_3": true}
 ]},
{"mas_name": "AG2", "benchmark_name": "b", "trace_id": 2, "round": 1, "trace": "hi",
 "annotations": [
  {"failure mode": "1.5 Step repetition", "annotator_1": false, "annotator_2": false, "annotator_3": true},
  {"failure mode": "3.3 Lack of result verification", "annotator_1": false, "annotator_2": NaN, "annotator_3": false}
 ]}
]`

func TestReadFileMAD(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mad.json")
	if err := os.WriteFile(path, []byte(madFile), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tests := []struct {
		pick, want string
	}{
		// Trace 1, FM-1.3: every annotator has a present row (annotator_3 the
		// merged draft one). FM-3.3: one present, one absent, one empty: no
		// majority. Trace 2, FM-3.3: two absent of the two answers.
		{"", "mad:AG2:1 FM-1.3 present @0\nmad:AG2:1 FM-3.3 unsure @0\nmad:AG2:2 FM-1.3 absent @0\nmad:AG2:2 FM-3.3 absent @0\n"},
		{Consensus, "mad:AG2:1 FM-1.3 present @0\nmad:AG2:1 FM-3.3 unsure @0\nmad:AG2:2 FM-1.3 absent @0\nmad:AG2:2 FM-3.3 absent @0\n"},
		{"mad:annotator_3", "mad:AG2:1 FM-1.3 present @0\nmad:AG2:2 FM-1.3 present @0\nmad:AG2:2 FM-3.3 absent @0\n"},
	}
	for _, tt := range tests {
		set, issues, err := ReadFile(ctx, path, tt.pick)
		if err != nil || len(issues) > 0 {
			t.Fatalf("pick %q: %v %v", tt.pick, err, issues)
		}
		checkSet(t, set, nil, nil)
		if got := show(set.Labels); got != tt.want {
			t.Errorf("pick %q:\n%s\nwant\n%s", tt.pick, got, tt.want)
		}
	}
	set, _, _ := ReadFile(ctx, path, "")
	if !slices.Equal(set.Sources, []string{"mad:annotator_1", "mad:annotator_2", "mad:annotator_3"}) || !strings.Contains(set.Detail, "at least 2 of the 3") {
		t.Errorf("consensus set: sources %v, detail %q", set.Sources, set.Detail)
	}
	if _, _, err := ReadFile(ctx, path, "mad:annotator_9"); err == nil || !strings.Contains(err.Error(), "mad:annotator_1, mad:annotator_2, mad:annotator_3, or consensus") {
		t.Errorf("unknown pick: %v", err)
	}
}

func TestReadFileFormats(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx := context.Background()
	// The format is the content's, whatever the name says.
	for _, tt := range []struct{ name, content, want string }{
		{"labels.txt", "trace,mode,present\nt,FM-1.1,true\n", "t FM-1.1 present @2\n"},
		{"labels.csv", `[{"trace": "t", "mode": "FM-1.1", "present": true}]`, "t FM-1.1 present @1\n"},
		{"labels.jsonl", "\n\n  {\"trace\": \"t\", \"mode\": \"FM-1.1\", \"present\": true}\n", "t FM-1.1 present @3\n"},
	} {
		set, issues, err := ReadFile(ctx, write(tt.name, tt.content), "")
		if err != nil || len(issues) > 0 || show(set.Labels) != tt.want {
			t.Errorf("%s: %v %v\n%s", tt.name, err, issues, show(set.Labels))
		}
	}
	if _, _, err := ReadFile(ctx, write("x.csv", "trace,mode,present\n"), "mad:annotator_1"); err == nil || !strings.Contains(err.Error(), "not a MAD dataset") {
		t.Errorf("pick from a CSV file: %v", err)
	}
	if _, _, err := ReadFile(ctx, dir, ""); err == nil {
		t.Error("a directory read as labels")
	}
	if _, _, err := ReadFile(ctx, filepath.Join(dir, "none"), ""); err == nil {
		t.Error("a missing file read as labels")
	}
}

// TestReadFileRealMAD takes the consensus of the 19 human-labelled MAD
// traces. The expected counts were computed independently in Python from the
// raw JSON, mapping label names with the shared notes' table of draft names.
func TestReadFileRealMAD(t *testing.T) {
	path := shared.Path(t, "mast/MAD_human_labelled_dataset.json")
	set, issues, err := ReadFile(context.Background(), path, "")
	if err != nil || len(issues) > 0 {
		t.Fatalf("%v %v", err, issues)
	}
	checkSet(t, set, nil, nil)
	present := map[string]int{}
	traces := map[string]bool{}
	for _, l := range set.Labels {
		traces[l.Trace] = true
		if l.Verdict == trace.Present {
			present[l.Mode]++
		}
		if l.Verdict == trace.Unsure {
			t.Errorf("unsure: %+v (every pair has a majority)", l)
		}
	}
	want := map[string]int{"FM-1.1": 6, "FM-1.2": 2, "FM-1.3": 2, "FM-1.4": 2, "FM-1.5": 5, "FM-2.1": 2, "FM-2.2": 5,
		"FM-2.3": 5, "FM-2.5": 3, "FM-2.6": 4, "FM-3.2": 7, "FM-3.3": 11}
	if len(set.Labels) != 19*14 || len(traces) != 19 || !maps.Equal(present, want) {
		t.Errorf("%d labels on %d traces, present per mode %v; want 266 on 19, %v", len(set.Labels), len(traces), present, want)
	}
	// annotator_3 left FM-3.2 and FM-3.3 empty on one trace.
	one, _, err := ReadFile(context.Background(), path, "mad:annotator_3")
	if err != nil || len(one.Labels) != 19*14-2 {
		t.Errorf("annotator_3: %v, %d labels, want 264", err, len(one.Labels))
	}
}
