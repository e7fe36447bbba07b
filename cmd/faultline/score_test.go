package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/pipeline"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/score"
	"github.com/faultline/faultline/internal/shared"
)

// TestScoreRealRollouts holds the scoring of the real Zero rollouts to what
// a reader of the runs finds: the answer is what the run's successful
// writes left on disk, remediation runs are not diagnoses, and a cohort
// that ships its own ground truth keeps its outcomes when real ground truth
// is scored over the same database.
func TestScoreRealRollouts(t *testing.T) {
	runs := shared.Path(t, "itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1")
	gt := shared.Path(t, "itbench/ITBench-Evaluations@5bd11e7/data/ground_truths.json")
	c := newCLI(t)
	if _, errOut, code := c.run("", "analyze", "-q", examples); code != exitOK {
		t.Fatalf("examples: exit %d: %s", code, errOut)
	}
	// The ground-truth file given as an argument is ground truth, not an
	// unrecognised trace file.
	out, errOut, code := c.run("", "analyze", "--json", runs, gt)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res analyzeJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	byID := map[string]score.TraceScore{}
	for _, ts := range res.Scores.Scores {
		byID[ts.TraceID[:8]] = ts
	}
	// 019bc313 (gemini): the heredoc write at step 123 and the echo writes
	// failed in the sandbox; python wrote the file at step 131 and jq
	// printed it at step 133. Two causes blamed, the root among them.
	if s := byID["019bc313"]; s.Status != score.Scored || s.Precision != 0.5 || s.Recall != 1 || !strings.Contains(s.Diagnosis, "printed by step 133") {
		t.Errorf("019bc313: %+v (%s)", s.EntityScore, s.Diagnosis)
	}
	// 019bc2a7 (gpt-oss): added at step 50, printed at 52, then patched at
	// 54: read by applying the patch, not reported as no answer.
	if s := byID["019bc2a7"]; s.Status != score.Scored || !strings.Contains(s.Diagnosis, "patched by step 54") || s.Recall != 0 {
		t.Errorf("019bc2a7: status %s, diagnosis %q", s.Status, s.Diagnosis)
	}
	for _, id := range []string{"019bc33a", "019bc310", "019bc332"} {
		if s := byID[id]; s.Status != score.NotDiagnosis || s.EntityScore != nil {
			t.Errorf("%s (remediation): status %s", id, s.Status)
		}
	}
	if n := res.Scores.Aggregate.UnscoredBy[score.NotDiagnosis]; n != 3 {
		t.Errorf("%d remediation runs unscored, want 3", n)
	}
	got := map[string][2]int{}
	for _, g := range res.Report.Groups {
		got[g.Name] = [2]int{g.Succeeded, g.Failed}
	}
	// What a reader of the runs finds: gemini 2 of 3 diagnoses right, the
	// two remediation runs of gpt-5.1-codex-max not graded at all.
	if got["gemini-3-flash-preview"] != [2]int{2, 1} || got["gpt-5.1-codex-max"] != [2]int{0, 0} {
		t.Errorf("successes and failures by model: %v", got)
	}
	if g := res.Report.All; g.UnknownWhy[string(score.NotDiagnosis)] != 3 {
		t.Errorf("unknown why: %v", g.UnknownWhy)
	}
	// Scoring the real ground truth over the whole database leaves the
	// examples to their own, and they keep their outcomes: sim-alpha still
	// 4 of 4.
	out, _, _ = c.run("", "score", "--json", "--ground-truth", gt)
	var scored pipeline.ScoreResult
	if err := json.Unmarshal([]byte(out), &scored); err != nil || len(scored.Elsewhere) != 12 || scored.Changes.Changed != 0 {
		t.Errorf("score over everything: %d left to their own ground truth, %d changed (%v)", len(scored.Elsewhere), scored.Changes.Changed, err)
	}
	out, _, _ = c.run("", "report", "--format", "json")
	var rep analyze.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Groups {
		if g.Name == "sim-alpha" && g.Succeeded != 4 {
			t.Errorf("sim-alpha: %d successes after scoring real ground truth, want 4", g.Succeeded)
		}
	}
	text, _, _ := c.run("", "report")
	if !strings.Contains(text, "Left unscored: 3 traces are not a root-cause diagnosis") {
		t.Errorf("the report does not say why the remediation runs are unscored:\n%s", text)
	}
	// A dry run of the examples' own ground truth changes nothing (the
	// remediation runs keep their undecided outcomes too).
	out, errOut, code = c.run("", "score", "--dry-run", "--ground-truth", examples+"/itbench-zero/ground_truths.json")
	if code != exitOK || !strings.Contains(out, "dry run, nothing stored; outcomes that would be: 0 new, 0 changed, 15 unchanged.") {
		t.Errorf("dry run: exit %d\n%s%s", code, out, errOut)
	}
}

// score --labels stores every readable line, takes a unique prefix of a
// trace id as show does, and exits 1 when a line could not be used.
func TestScoreOutcomeLabels(t *testing.T) {
	c := newCLI(t)
	c.run("", "ingest", "-q", examples)
	out, _, _ := c.run("", "ls", "--json")
	var traces []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(out), &traces); err != nil || len(traces) < 2 {
		t.Fatalf("%v: %s", err, out)
	}
	first, second := traces[0].ID, traces[1].ID
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.csv", "trace_id,success\n"+first[:13]+",true\n"+second+",false\nnot-a-trace,true\n")
	out, errOut, code := c.run("", "score", "--labels", good, "--json")
	var res struct {
		Traces []any `json:"traces"`
		Labels struct {
			Stored  int      `json:"stored"`
			Unknown []string `json:"unknown_traces"`
		} `json:"labels"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if code != exitOK || res.Labels.Stored != 2 || len(res.Labels.Unknown) != 1 || res.Traces == nil {
		t.Errorf("exit %d, %s\n%s", code, out, errOut)
	}
	bad := write("bad.csv", "trace_id,success\n"+first+",maybe\n"+second+",true\n")
	if _, errOut, code := c.run("", "score", "--labels", bad); code != exitDataError || !strings.Contains(errOut, "bad.csv:2") || !strings.Contains(errOut, "stored 1 outcomes") {
		t.Errorf("a bad line: exit %d, %s", code, errOut)
	}
}
