package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/shared"
	"github.com/faultline/faultline/taxonomy"
)

// evalOut is the part of `eval --json` the tests read.
type evalOut struct {
	Issues []struct {
		Severity, Path, Message string
		Line                    int
	} `json:"issues"`
	Agreement struct {
		Source, Labels struct {
			Name                             string
			Sources                          []string
			Traces, Decided, Implied, Unsure int
		}
		Traces    int
		Bootstrap struct{ Replicates int }
		Modes     []evalRow
		Merged    *evalRow
		Micro     *evalRow
		Macro     *struct {
			Modes int
			Kappa evalMetric
		}
	} `json:"agreement"`
}

type evalRow struct {
	Mode                         string
	Pairs, Excluded              int
	TP, FP, FN, TN               int
	Precision, Recall, F1, Kappa evalMetric
	Location                     *struct{ Pairs, Exact, Within int }
}

type evalMetric struct {
	Value      *float64
	Lo, Hi     *float64
	Degenerate bool
}

// kappa is the row's kappa with 4 decimals, or "undefined".
func (r *evalRow) kappa() string {
	if r.Kappa.Value == nil {
		return "undefined"
	}
	return fmt.Sprintf("%.4f", *r.Kappa.Value)
}

// table renders rows as "mode tp fp fn tn kappa" lines, the form the
// expectations below are written in.
func table(rows ...*evalRow) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s %d %d %d %d %s\n", r.Mode, r.TP, r.FP, r.FN, r.TN, r.kappa())
	}
	return b.String()
}

// evalJSON runs eval --json with args, expecting the exit status want.
func (c *cli) evalJSON(want int, args ...string) (evalOut, string) {
	c.t.Helper()
	out, errOut, code := c.run("", append([]string{"eval", "--json"}, args...)...)
	if code != want {
		c.t.Fatalf("eval %v: exit %d, want %d\n%s", args, code, want, errOut)
	}
	var res evalOut
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		c.t.Fatalf("eval %v: %v\n%s", args, err, out)
	}
	return res, out
}

// The expected tables on MAD's 19 human-labelled traces were computed
// independently: a Python script reading the raw JSON, mapping each row's
// label to a code with the shared notes' table of draft names (a mode is
// present for an annotator when any of its rows is), taking the consensus
// as at least 2 of 3, and computing the counts and kappa by hand-written
// formulas. Rows: mode TP FP FN TN kappa; the source is the first annotator
// named, the labels the second.
const (
	madAnnotator2VsAnnotator1 = `FM-1.1 3 0 3 13 0.5778
FM-1.2 2 0 0 17 1.0000
FM-1.3 2 0 3 14 0.4956
FM-1.4 2 0 0 17 1.0000
FM-1.5 5 0 0 14 1.0000
FM-2.1 2 0 0 17 1.0000
FM-2.2 3 2 0 14 0.6885
FM-2.3 5 0 0 14 1.0000
FM-2.4 0 0 0 19 undefined
FM-2.5 3 0 3 13 0.5778
FM-2.6 4 0 0 15 1.0000
FM-3.1 0 0 0 19 undefined
FM-3.2 4 0 3 12 0.6275
FM-3.3 11 0 0 8 1.0000
FM-3.2+FM-3.3 13 0 0 6 1.0000
all 46 2 12 206 0.8354
`
	madAnnotator1VsConsensus = `FM-1.1 6 0 0 13 1.0000
FM-1.2 2 0 0 17 1.0000
FM-1.3 2 3 0 14 0.4956
FM-1.4 2 0 0 17 1.0000
FM-1.5 5 0 0 14 1.0000
FM-2.1 2 0 0 17 1.0000
FM-2.2 3 0 2 14 0.6885
FM-2.3 5 0 0 14 1.0000
FM-2.4 0 0 0 19 undefined
FM-2.5 3 3 0 13 0.5778
FM-2.6 4 0 0 15 1.0000
FM-3.1 0 0 0 19 undefined
FM-3.2 7 0 0 12 1.0000
FM-3.3 11 0 0 8 1.0000
FM-3.2+FM-3.3 13 0 0 6 1.0000
all 52 6 2 206 0.9096
`
	// annotator_3 left FM-3.2 and FM-3.3 empty on one trace.
	madAnnotator3VsAnnotator1Verification = `FM-3.2 7 0 0 11 1.0000
FM-3.3 11 0 0 7 1.0000
FM-3.2+FM-3.3 13 0 0 5 1.0000
all 52 2 6 204 0.9094
`
)

// consensusPresent is, per mode, on how many of the 19 traces at least 2
// of the 3 annotators say present (same independent computation).
var consensusPresent = map[string]int{"FM-1.1": 6, "FM-1.2": 2, "FM-1.3": 2, "FM-1.4": 2, "FM-1.5": 5, "FM-2.1": 2,
	"FM-2.2": 5, "FM-2.3": 5, "FM-2.4": 0, "FM-2.5": 3, "FM-2.6": 4, "FM-3.1": 0, "FM-3.2": 7, "FM-3.3": 11}

func TestEvalMADHumanLabels(t *testing.T) {
	mad := shared.Path(t, "mast/MAD_human_labelled_dataset.json")
	c := newCLI(t)
	if _, errOut, code := c.run("", "ingest", "-q", mad); code != exitOK {
		t.Fatalf("ingest: exit %d\n%s", code, errOut)
	}
	all := func(r evalOut) []*evalRow {
		var rows []*evalRow
		for i := range r.Agreement.Modes {
			rows = append(rows, &r.Agreement.Modes[i])
		}
		return append(rows, r.Agreement.Merged, r.Agreement.Micro)
	}

	// Two stored sources: annotator against annotator.
	res, _ := c.evalJSON(exitOK, "--labels", "mad:annotator_1", "--source", "mad:annotator_2", "--bootstrap", "200")
	if got := table(all(res)...); got != madAnnotator2VsAnnotator1 {
		t.Errorf("annotator_2 vs annotator_1:\n%s\nwant\n%s", got, madAnnotator2VsAnnotator1)
	}
	if a := res.Agreement; a.Traces != 19 || a.Micro.Pairs != 266 || a.Micro.Excluded != 0 || a.Macro.Modes != 14 || a.Bootstrap.Replicates != 200 {
		t.Errorf("traces %d, micro %+v, macro %+v", a.Traces, a.Micro, a.Macro)
	}
	for _, r := range all(res) {
		// A bootstrap whose resamples all agree gives no interval, and says so.
		if k := r.Kappa; k.Value != nil && (k.Lo == nil) != k.Degenerate || k.Lo != nil && (*k.Lo > *k.Hi || *k.Hi > 1) {
			t.Errorf("%s kappa interval [%v, %v], degenerate %v", r.Mode, k.Lo, k.Hi, k.Degenerate)
		}
	}

	// The same two annotators, one picked from the file: the roles are
	// swapped, so FP and FN swap and kappa, symmetric, stays.
	swapped, _ := c.evalJSON(exitOK, "--labels", mad, "--labels-source", "mad:annotator_2", "--source", "mad:annotator_1", "--bootstrap", "0")
	for i, r := range all(swapped) {
		o := all(res)[i]
		if r.Mode != o.Mode || r.TP != o.TP || r.FP != o.FN || r.FN != o.FP || r.TN != o.TN || r.kappa() != o.kappa() {
			t.Errorf("swapped %s: %+v vs %+v", r.Mode, r, o)
		}
		if r.Kappa.Lo != nil {
			t.Errorf("%s: an interval with --bootstrap 0", r.Mode)
		}
	}

	// An annotator against the file's consensus (of which it is a part).
	cons, _ := c.evalJSON(exitOK, "--labels", mad, "--source", "mad:annotator_1", "--bootstrap", "200")
	if got := table(all(cons)...); got != madAnnotator1VsConsensus {
		t.Errorf("annotator_1 vs consensus:\n%s\nwant\n%s", got, madAnnotator1VsConsensus)
	}
	if l := cons.Agreement.Labels; l.Traces != 19 || l.Decided != 266 || l.Unsure != 0 || !slices.Equal(l.Sources, []string{"mad:annotator_1", "mad:annotator_2", "mad:annotator_3"}) {
		t.Errorf("labels side %+v", l)
	}

	// An annotator with empty cells: those pairs are left out, and counted.
	three, _ := c.evalJSON(exitOK, "--labels", "mad:annotator_1", "--source", "mad:annotator_3", "--bootstrap", "0")
	rows := all(three)
	if got := table(rows[len(rows)-4:]...); got != madAnnotator3VsAnnotator1Verification {
		t.Errorf("annotator_3 vs annotator_1:\n%s\nwant\n%s", got, madAnnotator3VsAnnotator1Verification)
	}
	if rows[12].Excluded != 1 || rows[12].Pairs != 18 || three.Agreement.Micro.Excluded != 2 {
		t.Errorf("excluded: FM-3.2 %+v, micro %+v", rows[12], three.Agreement.Micro)
	}

	// The text form: aligned tables, undefined said in words.
	text, errOut, code := c.run("", "eval", "--labels", mad, "--source", "mad:annotator_1")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"labels  " + mad + ": 19 traces, 266 decisions\n",
		"        consensus: present or absent when at least 2 of the 3 annotators agree, otherwise unsure\n",
		"19 traces compared; 95% intervals: Wilson score intervals for precision, recall and accuracy; percentile bootstrap over traces for F1, kappa and the means over modes (2000 resamples, seed 1)\n",
		"FM-2.4 Information withholding             19   0   0   0   19         0          undefined          undefined           undefined           undefined\n",
		"FM-2.6 Reasoning-action mismatch           19   4   0   0   15         0  1.00 [0.51, 1.00]  1.00 [0.51, 1.00]  1.00 (no interval)  1.00 (no interval)\n",
		"FM-3.2+3.3 verification, merged",
		"all modes (micro)                         266  52   6   2  206         0  0.90 [0.79, 0.95]  0.96 [0.87, 0.99]   0.93 [0.87, 0.98]   0.91 [0.84, 0.97]\n",
		"mean over modes (macro)",
		"\nundefined: a zero denominator.",
		"\nno interval: every bootstrap resample gives the same value",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
	again, _, _ := c.run("", "eval", "--labels", mad, "--source", "mad:annotator_1")
	if again != text {
		t.Error("a second run printed something else: the bootstrap is not reproducible")
	}

	// Detectors against the consensus. Detectors are being extended, so the
	// numbers move: they are logged, and only what must hold is checked.
	det, _ := c.evalJSON(exitOK, "--labels", mad)
	var modes []string
	for _, d := range detect.All {
		if _, ok := taxonomy.MAST.Mode(d.Mode); ok {
			modes = append(modes, d.Mode)
		}
	}
	for _, r := range all(det) {
		if r == nil {
			continue
		}
		t.Logf("detector vs consensus: %s pairs %d TP %d FP %d FN %d TN %d kappa %s", r.Mode, r.Pairs, r.TP, r.FP, r.FN, r.TN, r.kappa())
		switch r.Mode {
		case "all", "FM-3.2+FM-3.3":
			continue
		}
		// Detectors ran on all 19 traces, and their silence is absence for
		// the modes they look for, which are the only modes compared.
		if !slices.Contains(modes, r.Mode) || r.Pairs != 19 || r.TP+r.FN != consensusPresent[r.Mode] || r.Excluded != 0 {
			t.Errorf("detector row %+v: want a detector's mode on 19 traces with %d present in the labels", r, consensusPresent[r.Mode])
		}
	}
	if s := det.Agreement.Source; s.Name != "detector" || s.Traces != 19 {
		t.Errorf("source side %+v", s)
	}
}

// A small MAD file of three traces with three annotators: the tests below
// need stored sources that do not move when the detectors change.
const evalMADFile = `[
{"mas_name": "AG2", "trace_id": 1, "trace": "one",
 "annotations": [
  {"failure mode": "1.5 Step repetition", "annotator_1": true, "annotator_2": true, "annotator_3": false},
  {"failure mode": "3.3 Lack of result verification", "annotator_1": true, "annotator_2": false, "annotator_3": false}]},
{"mas_name": "AG2", "trace_id": 2, "trace": "two",
 "annotations": [
  {"failure mode": "1.5 Step repetition", "annotator_1": false, "annotator_2": false, "annotator_3": false},
  {"failure mode": "3.3 Lack of result verification", "annotator_1": true, "annotator_2": true, "annotator_3": true}]},
{"mas_name": "AG2", "trace_id": 3, "trace": "three",
 "annotations": [
  {"failure mode": "1.5 Step repetition", "annotator_1": true, "annotator_2": false, "annotator_3": false},
  {"failure mode": "3.3 Lack of result verification", "annotator_1": false, "annotator_2": false, "annotator_3": false}]}
]`

func TestEvalLabelFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	traces := write("mad.json", evalMADFile)
	// Reviewed labels: FM-1.3 present on 1 (at step 0) and 3, absent on 2
	// by silence; FM-3.3 present on 2; a row with a bad mode, one on a
	// trace not ingested, and one citing a step trace 3 does not have.
	csv := write("reviewed.csv", `trace,mode,present,steps,note
mad:AG2:1,FM-1.3,true,0,
mad:AG2:3,Step repetition,yes,,
mad:AG2:2,FM-3.3,true,,
mad:AG2:2,FM-7.1,true,,typo
mad:AG2:9,FM-1.3,true,,not ingested
mad:AG2:3,FM-3.3,false,40,
`)
	c := newCLI(t)
	out, errOut, code := c.run("", "eval", "--ingest", traces, "--labels", csv, "--source", "mad:annotator_1", "--bootstrap", "0")
	if code != exitDataError {
		t.Errorf("exit %d, want %d (labels that could not be used)", code, exitDataError)
	}
	for _, want := range []string{
		"ingested 3 traces from 1 file, 0 errors\n",
		"error: " + csv + `:5: unknown mode "FM-7.1" (write a MAST code, FM-1.1 to FM-3.3, a mode's name, or a system code, SYS-1 to SYS-4); label skipped` + "\n",
		"error: " + csv + `:6: trace "mad:AG2:9" is not in the database; its labels are skipped` + "\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// Steps on an absent label are dropped while reading, with a notice.
	if !strings.Contains(errOut, "notice: "+csv+":7: steps and quotes say where a mode is") {
		t.Errorf("stderr: %s", errOut)
	}
	// annotator_1 says FM-1.3 on 1 and 3: both right. FM-3.3 on 1 and 2:
	// 2 right, 1 wrong (absent by silence), 3 right absent.
	for _, want := range []string{
		"labels  " + csv + ": 3 traces, 6 decisions (2 absences implied by silence)\n",
		"mode                             n  TP  FP  FN  TN  left out  precision  recall    F1  kappa\n" +
			"FM-1.3 Step repetition           3   2   0   0   1         0       1.00    1.00  1.00   1.00\n" +
			"FM-3.3 Incorrect verification    3   1   1   0   1         0       0.50    1.00  0.67   0.40\n" +
			"FM-3.2+3.3 verification, merged  3   1   1   0   1         0       0.50    1.00  0.67   0.40\n" +
			"all modes (micro)                6   3   1   0   2         0       0.75    1.00  0.86   0.67\n" +
			"mean over modes (macro)                                            0.75    1.00  0.83   0.70\n",
		"\nLocation: true positives whose labels cite steps",
		"mode                    pairs   exact  within ±1\n" +
			"FM-1.3 Step repetition      1  0 (0%)     0 (0%)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}

	// JSON: the same, with the issues in it.
	res, raw := c.evalJSON(exitDataError, "--labels", csv, "--source", "mad:annotator_1", "--bootstrap", "0", "--within", "3")
	if len(res.Issues) != 3 || res.Issues[0].Line != 5 || res.Issues[0].Severity != "error" || res.Issues[0].Path != csv {
		t.Errorf("issues %+v", res.Issues)
	}
	if a := res.Agreement; len(a.Modes) != 2 || a.Modes[0].Location == nil || a.Modes[0].Location.Pairs != 1 || a.Merged == nil || a.Merged.TP != 1 || a.Merged.FP != 1 {
		t.Errorf("agreement %+v", a)
	}
	for _, field := range []string{`"source"`, `"labels"`, `"bootstrap"`, `"within": 3`, `"modes"`, `"merged"`, `"micro"`, `"macro"`,
		`"precision"`, `"recall"`, `"f1"`, `"kappa"`, `"accuracy"`, `"lo"`, `"hi"`, `"location"`, `"excluded"`, `"implied"`} {
		if !strings.Contains(raw, field) {
			t.Errorf("--json lacks %s", field)
		}
	}

	// Consensus of the small file: FM-1.3 on 1, FM-3.3 on 2.
	cons, _ := c.evalJSON(exitOK, "--labels", traces, "--source", "mad:annotator_1", "--bootstrap", "0")
	if got := table(&cons.Agreement.Modes[0], &cons.Agreement.Modes[1]); got != "FM-1.3 1 1 0 1 0.4000\nFM-3.3 1 1 0 1 0.4000\n" {
		t.Errorf("vs consensus:\n%s", got)
	}
}

func TestEvalUsageErrors(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "l.csv")
	os.WriteFile(csv, []byte("trace,mode,present\nnowhere,FM-1.1,true\n"), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"eval"}, `required flag(s) "labels" not set`},
		{[]string{"eval", "--labels", filepath.Join(dir, "missing.csv")}, `--labels ` + filepath.Join(dir, "missing.csv") + ` is no file, and no annotations of source`},
		{[]string{"eval", "--labels", "mad:annotator_1", "--labels-source", "mad:annotator_2"}, "--labels-source picks one source of a MAD file"},
		{[]string{"eval", "--labels", csv, "--labels-source", "mad:annotator_2"}, "is not a MAD dataset"},
		{[]string{"eval", "--labels", csv}, "none of the 1 traces " + csv + " labels is in the database"},
	}
	c := newCLI(t)
	for _, tt := range tests {
		_, errOut, code := c.run("", tt.args...)
		if code != exitFailure || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, errOut, exitFailure, tt.want)
		}
	}
	help, _, _ := c.run("", "eval", "--help")
	for _, want := range []string{"--labels-source", "--ingest", "Silence is absence", "faultline eval --labels mad:annotator_1 --source mad:annotator_2"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

// whoWhenLabels is where Who&When's samples put their decisive errors,
// as faultline show numbers the steps (the algorithm-generated records'
// system prompts come first), and whose they are.
var whoWhenLabels = map[string]string{
	"whowhen:algorithm-generated:4d51c4bf-4b0e-4f3d-897b-3f6687a7d9f2":                      "Excel_Expert@3",
	"whowhen:algorithm-generated:cf106601-ab4f-4af9-b045-5295fe67b37d":                      "Verification_Expert@5",
	"whowhen:algorithm-generated:df6561b2-7ee5-4540-baab-5095f742716a":                      "Verification_Expert@7",
	"whowhen:hand-crafted:6e3be83d1949fa52cba03fb1ce4b5b3bf7e37a83fd7d67694b10b2e439d90cf8": "WebSurfer@12",
	"whowhen:hand-crafted:8ad84bd6fe38481ba49e7ad1f6fbd43219a999074e5c6fc940003281f55ec65b": "Orchestrator@9",
	"whowhen:hand-crafted:624cbf11-6a41-4692-af9c-36b3e5ca3130":                             "Websurfer@24",
}

func TestEvalWhoWhenAttribution(t *testing.T) {
	dir := shared.Path(t, "samples/whowhen")
	c := newCLI(t)
	out, errOut, code := c.run("", "eval", "--json", "--ingest", dir, "--labels", "human:whowhen", "--bootstrap", "200")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Attribution *struct {
			Source     string
			Labels     []string
			Traces     int
			Attributed int
			Within     int
			Agent      struct{ Correct int }
			Step       struct{ Correct int }
			Near       struct{ Correct int }
			Rows       []struct {
				Trace      string
				LabelAgent string `json:"label_agent"`
				LabelStep  int    `json:"label_step"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	a := res.Attribution
	if a == nil || a.Source != "detector" || !slices.Equal(a.Labels, []string{"human:whowhen"}) || a.Traces != 6 || a.Within != 1 || len(a.Rows) != 6 {
		t.Fatalf("attribution %+v", a)
	}
	for _, r := range a.Rows {
		if got := fmt.Sprintf("%s@%d", r.LabelAgent, r.LabelStep); got != whoWhenLabels[r.Trace] {
			t.Errorf("%s: label %s, want %s", r.Trace, got, whoWhenLabels[r.Trace])
		}
	}
	// The detectors are being extended, so their numbers move: they are
	// logged, and only what must hold is checked.
	t.Logf("detector on Who&When's samples: located %d of %d; agent %d, step %d, within ±1 %d", a.Attributed, a.Traces, a.Agent.Correct, a.Step.Correct, a.Near.Correct)
	if a.Attributed > a.Traces || a.Agent.Correct > a.Attributed || a.Step.Correct > a.Near.Correct || a.Near.Correct > a.Attributed {
		t.Errorf("counts do not nest: %+v", a)
	}

	text, errOut, code := c.run("", "eval", "--labels", "human:whowhen")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"Decisive errors: 6 traces labelled with the agent and step that made the run fail (human:whowhen);\n",
		"attribution     correct  ",
		"step within ±1 ",
		"Best published on Who&When: 53.5% agent-level, 14.2% step-level accuracy.\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "traces compared") {
		t.Errorf("the agreement tables are printed with nothing compared:\n%s", text)
	}
}
