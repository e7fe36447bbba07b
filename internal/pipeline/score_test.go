package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/faultline/faultline/ingest/otel"
	"github.com/faultline/faultline/internal/store/sqlite"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/itbench"
	"github.com/faultline/faultline/internal/score"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// answered is a run that printed a diagnosis blaming entity.
func answered(id, system, entity string, outcomes ...trace.Outcome) *trace.Trace {
	tr := &trace.Trace{ID: id, Format: "codex", System: system, Scenario: "101", Outcomes: outcomes}
	tr.Append(trace.Step{Kind: trace.KindFinal, Role: "assistant", Text: `{"entities":[{"name":"` + entity + `","contributing_factor":true}]}`})
	return tr
}

// Only ITBench runs are scored: another benchmark's sample numbered like an
// incident, or a trace whose scenario id merely equals one, is not, unless
// the scenario is named.
func TestScoreStoredScoresOnlyITBenchRuns(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	gt, _, err := score.LoadPath("../../examples/itbench-zero/ground_truths.json", "")
	if err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	runs := []*trace.Trace{
		answered("zero", itbench.System, "otel-demo/ConfigMap/flagd-config"),
		answered("inspect", "inspect", "x", trace.Outcome{Source: trace.FormatOutcomeSource, Metric: "model_graded_fact", Success: &yes}),
		answered("otel", "", "x", trace.Outcome{Source: trace.FormatOutcomeSource, Metric: otel.StatusMetric, Success: &no}),
	}
	if _, err := ingest.StoreFile(ctx, st, ingest.FileInfo{Path: "/runs", Hash: "h"}, runs...); err != nil {
		t.Fatal(err)
	}
	traces, err := st.List(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		scenario string
		want     []string
	}{
		{"", []string{"zero"}},
		{"101", []string{"inspect", "otel", "zero"}},
	} {
		res, err := ScoreStored(ctx, st, ScoreRequest{Traces: traces, GroundTruth: gt, Scenario: tc.scenario, Metric: "recall", Threshold: 1})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range res.Scores {
			got = append(got, s.TraceID)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) || res.Stored != len(tc.want) {
			t.Errorf("scenario %q: scored %v (%d stored), want %v", tc.scenario, got, res.Stored, tc.want)
		}
	}
}

// A cohort that ships its own ground truth is graded by it alone: another
// ground truth with the same incident ids leaves it out and changes
// nothing. Replacing a stored outcome is counted and listed; a dry run
// stores nothing.
func TestScoreStoredOwnGroundTruthAndChanges(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	dir := t.TempDir()
	examplesGT, err := filepath.Abs("../../examples/itbench-zero/ground_truths.json")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(examplesGT)
	if err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(dir, "cohort", "ground_truths.json")
	if err := os.MkdirAll(filepath.Join(dir, "cohort", "m", "101", "1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(own, data, 0o644); err != nil {
		t.Fatal(err)
	}
	rollout := filepath.Join(dir, "cohort", "m", "101", "1", "rollout.jsonl")
	if err := os.WriteFile(rollout, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := answered("sim", itbench.System, "otel-demo/ConfigMap/flagd-config")
	run.Source = rollout
	if _, err := ingest.StoreFile(ctx, st, ingest.FileInfo{Path: rollout, Hash: "h"}, run); err != nil {
		t.Fatal(err)
	}
	traces, err := st.List(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	// "Another" ground truth: the same incidents from another file, where
	// the run's answer is wrong.
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`[{"id":"101","groups":[{"id":"g","kind":"Deployment","namespace":"otel-demo","name":"ad","root_cause":true}]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	score1 := func(file string, dry bool) *ScoreResult {
		t.Helper()
		set, _, err := score.LoadFiles([]string{file}, "")
		if err != nil {
			t.Fatal(err)
		}
		res, err := ScoreStored(ctx, st, ScoreRequest{Traces: traces, GroundTruth: set, Files: []string{file}, Metric: "recall", Threshold: 1, DryRun: dry})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := score1(other, false); len(res.Scores) != 0 || len(res.Elsewhere) != 1 || res.Elsewhere[0].GroundTruth != own || res.Stored != 0 {
		t.Errorf("other ground truth: scored %d, elsewhere %+v, stored %d", len(res.Scores), res.Elsewhere, res.Stored)
	}
	if res := score1(own, true); res.Changes.New != 1 || res.Stored != 0 {
		t.Errorf("dry run: changes %+v, stored %d", res.Changes, res.Stored)
	}
	if res := score1(own, false); res.Changes.New != 1 || res.Stored != 1 || res.Scores[0].Status != score.Scored {
		t.Errorf("own ground truth: %+v", res)
	}
	if res := score1(own, false); res.Changes.Unchanged != 1 || res.Changes.New != 0 {
		t.Errorf("again: changes %+v", res.Changes)
	}
	// The answer file changes its mind: the change is counted and listed.
	tr, err := st.Load(ctx, "sim")
	if err != nil {
		t.Fatal(err)
	}
	tr.Steps[0].Text = `{"entities":[{"name":"otel-demo/Deployment/ad","contributing_factor":true}]}`
	traces[0].Source = rollout
	if _, err := ingest.StoreFile(ctx, st, ingest.FileInfo{Path: rollout, Hash: "h2"}, tr); err != nil {
		t.Fatal(err)
	}
	res := score1(own, true)
	if res.Changes.Changed != 1 || len(res.Changes.List) != 1 || *res.Changes.List[0].Before.Success != true || *res.Changes.List[0].After.Success != false {
		t.Errorf("changed answer: %+v", res.Changes)
	}
}
