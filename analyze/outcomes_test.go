package analyze

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/score"
	"github.com/faultline/faultline/store"
	"github.com/faultline/faultline/trace"
)

// Runs another benchmark graded (an Inspect sample numbered like an ITBench
// incident) are not scored as ITBench incidents; runs whose format only
// says that they broke are, and so is any run when the scenario is named.
func TestScoreStoredLeavesOtherBenchmarks(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	gt, _, err := score.LoadPath("../examples/itbench-zero/ground_truths.json", "")
	if err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	mk := func(id, format string, outcomes ...trace.Outcome) *trace.Trace {
		tr := &trace.Trace{ID: id, Format: format, Scenario: "101", Outcomes: outcomes}
		tr.Append(trace.Step{Kind: trace.KindMessage, Role: "assistant", Text: "done"})
		return tr
	}
	runs := []*trace.Trace{
		mk("zero", "codex"),
		mk("inspect", "inspect", trace.Outcome{Source: trace.FormatOutcomeSource, Metric: "model_graded_fact", Success: &yes}),
		mk("otel", "otlp", trace.Outcome{Source: trace.FormatOutcomeSource, Metric: ingest.OTelStatusMetric, Success: &no}),
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
		{"", []string{"otel", "zero"}},
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
		if !slices.Equal(got, tc.want) || res.Stored != len(tc.want) {
			t.Errorf("scenario %q: scored %v (%d stored), want %v", tc.scenario, got, res.Stored, tc.want)
		}
	}
}
