package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/shared"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// cli runs faultline with a database of its own and returns stdout, stderr
// and the exit status.
type cli struct {
	t  *testing.T
	db string
}

func newCLI(t *testing.T) *cli {
	return &cli{t: t, db: filepath.Join(t.TempDir(), "f.db")}
}

func (c *cli) run(stdin string, args ...string) (string, string, int) {
	c.t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"--db", c.db}, args...), strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/faultline -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from golden file (go test ./cmd/faultline -update rewrites it)\n--- got\n%s", name, got)
	}
}

const examples = "../../examples"

func TestAnalyzeExamplesGolden(t *testing.T) {
	c := newCLI(t)
	out, errOut, code := c.run("", "analyze", examples)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "ingested 12 traces from 12 files") || strings.Contains(errOut, "error:") {
		t.Errorf("stderr: %s", errOut)
	}
	golden(t, "analyze_examples.txt", out)

	// A second run reads nothing again and prints the same summary.
	again, errOut, code := c.run("", "analyze", examples)
	if code != exitOK || again != out || !strings.Contains(errOut, "ingested 0 traces from 0 files, 12 unchanged") {
		t.Errorf("second run: exit %d, stderr %q, same output %v", code, errOut, again == out)
	}
}

func TestShowGolden(t *testing.T) {
	c := newCLI(t)
	if _, errOut, code := c.run("", "ingest", "-q", examples); code != exitOK {
		t.Fatalf("ingest: exit %d\n%s", code, errOut)
	}
	out, _, _ := c.run("", "ls", "--json")
	var list []struct {
		ID, Model, Scenario, Trial string
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	picked := map[string]string{}
	for _, tr := range list {
		key := tr.Model + "-" + tr.Scenario + "-" + tr.Trial
		switch key {
		case "sim-gamma-101-1", "sim-beta-101-1", "sim-alpha-102-1":
			picked[key] = tr.ID
		}
	}
	if len(picked) != 3 {
		t.Fatalf("example runs not found: %v", picked)
	}
	for key, id := range picked {
		out, errOut, code := c.run("", "show", id)
		if code != exitOK {
			t.Fatalf("show %s: exit %d %s", id, code, errOut)
		}
		golden(t, "show_"+key+".txt", out)
	}
}

func TestShowJSON(t *testing.T) {
	c := newCLI(t)
	c.run("", "ingest", "-q", examples)
	out, _, _ := c.run("", "ls", "--json", "--model", "sim-gamma")
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"id", "format", "system", "model", "task", "steps", "outcome"} {
		if _, ok := list[0][field]; !ok {
			t.Errorf("ls --json lacks %q", field)
		}
	}
	for _, tr := range list {
		out, _, code := c.run("", "show", "--json", tr["id"].(string))
		if code != exitOK {
			t.Fatal(out)
		}
		var shown struct {
			Trace    map[string]any   `json:"trace"`
			Steps    []map[string]any `json:"steps"`
			Findings []map[string]any `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &shown); err != nil {
			t.Fatal(err)
		}
		if shown.Trace["id"] != tr["id"] || len(shown.Steps) != int(tr["steps"].(float64)) || shown.Findings == nil {
			t.Errorf("show --json %s: trace %v, %d steps", tr["id"], shown.Trace["id"], len(shown.Steps))
		}
		for _, f := range shown.Findings {
			for _, s := range f["steps"].([]any) {
				if int(s.(float64)) >= len(shown.Steps) {
					t.Errorf("finding cites step %v of %d", s, len(shown.Steps))
				}
			}
		}
	}
}

func TestIngestBadInputExitStatus(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join(examples, "itbench-zero/sim-alpha/101/1/AGENTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "notes.md"), good, 0o644)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}
{"timestamp":"2026-01-01T00:00:01Z","type":"turn_context","payload":{"model":"m"}}
{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}}
{"timestamp":"2026-01-01T00:00:03Z","type":"response_item","payload":{"type":"mess
`), 0o644)
	c := newCLI(t)
	out, errOut, code := c.run("", "ingest", dir)
	if code != exitDataError {
		t.Errorf("exit %d, want %d", code, exitDataError)
	}
	if !strings.Contains(errOut, "error: "+bad+":4: not a valid event") || !strings.Contains(out, "ingested 1 trace from 1 file, 1 other file skipped, 1 error") {
		t.Errorf("stdout %q\nstderr %q", out, errOut)
	}
	// The good part of the file was stored.
	if out, _, _ := c.run("", "ls"); !strings.Contains(out, "x ") {
		t.Errorf("ls: %s", out)
	}
	// Standard input works too, and unknown content named explicitly is an error.
	if _, errOut, code := c.run("not a trace", "ingest", "-"); code != exitDataError || !strings.Contains(errOut, "<stdin>: unrecognised format") {
		t.Errorf("stdin: exit %d %s", code, errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	c := newCLI(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"ls", "--outcome", "maybe"}, `for "--outcome" flag: must be one of success, failure, unknown`},
		{[]string{"show", "nope"}, "no database at " + c.db + ": ingest traces first"},
		{[]string{"report"}, "no database at"},
		{[]string{"detectors", "nope"}, `no detector named "nope"`},
		{[]string{"ingest"}, "requires at least 1 arg"},
	}
	for _, tt := range tests {
		_, errOut, code := c.run("", tt.args...)
		if code != exitFailure || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, code, errOut, tt.want)
		}
	}
	// Reading commands created nothing.
	if _, err := os.Stat(c.db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a reading command created the database: %v", err)
	}
	c.run("", "ingest", "-q", examples)
	if _, errOut, code := c.run("", "show", "nope"); code != exitFailure || !strings.Contains(errOut, `trace "nope": not found`) {
		t.Errorf("show nope: exit %d, stderr %q", code, errOut)
	}
}

func TestDetectorsAndVersion(t *testing.T) {
	c := newCLI(t)
	out, _, code := c.run("", "detectors")
	if code != exitOK || !strings.Contains(out, "repeated-tool-call") || !strings.Contains(out, "FM-1.5 Unaware of termination conditions") {
		t.Errorf("detectors: %s", out)
	}
	out, _, _ = c.run("", "detectors", "harness-retry-loop")
	if !strings.Contains(out, "Blind spots:") {
		t.Errorf("detector doc: %s", out)
	}
	out, _, _ = c.run("", "version", "--json")
	var v versionJSON
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Taxonomy != "mast-v3" || v.Detectors == "" {
		t.Errorf("version: %s", out)
	}
}

// TestRealData runs the main job over every real trace file in the shared data.
func TestRealData(t *testing.T) {
	itbench := shared.Path(t, "itbench")
	mast := shared.Path(t, "mast/MAD_human_labelled_dataset.json")
	c := newCLI(t)
	out, errOut, code := c.run("", "analyze", "--json", "--source", "detector", itbench, mast)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var res analyzeJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	// 28 rollouts (3 empty) and the 19 MAD traces.
	if res.Ingest.Traces != 25+19 || res.Ingest.Errors != 0 {
		t.Errorf("ingest: %d traces, %d errors: %+v", res.Ingest.Traces, res.Ingest.Errors, res.Ingest.Issues)
	}
	empty := 0
	for _, i := range res.Ingest.Issues {
		if strings.Contains(i.Message, "is empty") {
			empty++
		}
	}
	if empty != 3 {
		t.Errorf("%d empty sessions reported, want 3", empty)
	}
	// The 15 gpt-oss runs whose model never answered are infrastructure
	// failures (SYS-1), not the agent ignoring its stop condition.
	sys1, fm15 := 0, 0
	for _, c := range res.Report.All.System.Codes {
		if c.Code == "SYS-1" {
			sys1 = c.Traces.K
		}
	}
	for _, m := range res.Report.All.Modes {
		if m.Mode == "FM-1.5" {
			fm15 = m.All.K
		}
	}
	if res.Report.By != "model" || sys1 < 15 || fm15 > 2 {
		t.Errorf("SYS-1 in %d traces, FM-1.5 in %d", sys1, fm15)
	}
}

func TestScoreExamples(t *testing.T) {
	c := newCLI(t)
	c.run("", "ingest", "-q", examples)
	out, errOut, code := c.run("", "score", "--json", "--ground-truth", examples+"/itbench-zero/ground_truths.json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Traces []struct {
			Model, Scenario, Trial, Status string
			Recall                         float64
		}
		Aggregate struct {
			Trials   int
			NoAnswer int `json:"no_answer"`
		}
		Stored int
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	recall := map[string]float64{}
	for _, tr := range res.Traces {
		recall[tr.Model] += tr.Recall
		if tr.Model == "sim-gamma" && tr.Scenario == "101" && tr.Trial == "1" && tr.Status != "no answer" {
			t.Errorf("gamma 101/1 status %q, want no answer", tr.Status)
		}
	}
	// The example cohort's README: sim-alpha 4/4, sim-beta 2/4, sim-gamma 1/4.
	if recall["sim-alpha"] != 4 || recall["sim-beta"] != 2 || recall["sim-gamma"] != 1 || res.Stored != 12 || res.Aggregate.NoAnswer != 1 {
		t.Errorf("recall by model %v, stored %d, aggregate %+v", recall, res.Stored, res.Aggregate)
	}
	// The outcomes are stored: failures can be listed.
	out, _, _ = c.run("", "ls", "--outcome", "failure", "--json")
	var failed []map[string]any
	json.Unmarshal([]byte(out), &failed)
	if len(failed) != 5 {
		t.Errorf("%d failures listed, want 5", len(failed))
	}

	// Outcome labels override nothing but add a source of their own.
	labels := filepath.Join(t.TempDir(), "labels.csv")
	id := failed[0]["id"].(string)
	os.WriteFile(labels, []byte("trace_id,success\n"+id+",true\nnope,false\n"), 0o644)
	_, errOut, code = c.run("", "score", "--labels", labels)
	if code != exitOK || !strings.Contains(errOut, `no trace "nope"`) || !strings.Contains(errOut, "stored 1 outcomes") {
		t.Errorf("labels: exit %d: %s", code, errOut)
	}
	out, _, _ = c.run("", "ls", "--outcome", "failure", "--json")
	json.Unmarshal([]byte(out), &failed)
	if len(failed) != 4 {
		t.Errorf("after labelling one trace a success: %d failures, want 4", len(failed))
	}
	if _, errOut, code := c.run("", "score"); code != exitFailure || !strings.Contains(errOut, "--ground-truth") {
		t.Errorf("no flags: exit %d %s", code, errOut)
	}
	if _, errOut, code := c.run("", "score", "--ground-truth", examples, "--metric", "accuracy"); code != exitFailure || !strings.Contains(errOut, "unknown metric") {
		t.Errorf("bad metric: exit %d %s", code, errOut)
	}
}

// analyze ends by saying where the traces went and what to run next, and
// the commands it suggests work.
func TestAnalyzeNextSteps(t *testing.T) {
	c := newCLI(t)
	_, errOut, code := c.run("", "analyze", examples)
	if code != exitOK || !strings.Contains(errOut, "The traces are stored in "+c.db+". Next:") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(errOut, "--ground-truth") {
		t.Errorf("suggests ground truth for runs that were scored:\n%s", errOut)
	}
	show := regexp.MustCompile(`faultline --db \S+ show (\S+)`).FindStringSubmatch(errOut)
	if show == nil {
		t.Fatalf("no show suggested:\n%s", errOut)
	}
	if _, errOut, code := c.run("", "show", show[1]); code != exitOK {
		t.Errorf("the suggested show %s: exit %d %s", show[1], code, errOut)
	}
	if _, errOut, _ := c.run("", "-q", "analyze", examples); strings.Contains(errOut, "Next:") {
		t.Errorf("-q still prints the next steps")
	}
}
