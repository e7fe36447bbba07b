package analyze

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/score"
	"github.com/faultline/faultline/store"
	"github.com/faultline/faultline/trace"
)

// ScoreRequest says which traces to score and how.
type ScoreRequest struct {
	Traces      []store.Summary
	GroundTruth score.Set
	Scenario    string // overrides every trace's scenario when set
	Options     score.Options
	Metric      score.Metric
	Threshold   float64
}

// Disagreement is a trace whose official ITBench verdict differs from ours.
type Disagreement struct {
	TraceID  string  `json:"trace_id"`
	Ours     float64 `json:"ours"`
	Official float64 `json:"official"`
	Metric   string  `json:"metric"`
}

// ScoreResult is what ScoreStored did.
type ScoreResult struct {
	Scores        []score.TraceScore `json:"traces"`
	Aggregate     score.Aggregate    `json:"aggregate"`
	Disagreements []Disagreement     `json:"disagreements"`
	Stored        int                `json:"stored"`
}

// gradedByItsFormat says whether a trace's own format graded its answer (a
// tau-bench reward, an Inspect score, Who&When's correctness): such a run
// belongs to another benchmark, and a sample id that happens to equal an
// ITBench incident id (Inspect numbers its samples 1, 2, 3…) must not have
// it scored as that incident.
func gradedByItsFormat(t *trace.Trace) bool {
	for _, o := range t.Outcomes {
		if o.Source == trace.FormatOutcomeSource && o.Metric != ingest.OTelStatusMetric {
			return true
		}
	}
	return false
}

// ScoreStored scores stored traces against ground truth, stores each
// outcome (source "itbench") and compares it with the official scorer's
// where the run carried one.
func ScoreStored(ctx context.Context, st *store.Store, req ScoreRequest) (*ScoreResult, error) {
	res := &ScoreResult{Scores: []score.TraceScore{}, Disagreements: []Disagreement{}}
	for _, sm := range req.Traces {
		t, err := st.Load(ctx, sm.ID)
		if err != nil {
			return nil, err
		}
		if req.Scenario == "" && gradedByItsFormat(t) {
			continue // another benchmark's run, whatever its scenario id
		}
		ts := score.ScoreTrace(t, req.GroundTruth, req.Scenario, req.Options)
		if ts.Status == score.NoGroundTruth && t.Scenario == "" && req.Scenario == "" {
			continue // not an ITBench run at all
		}
		res.Scores = append(res.Scores, ts)
		o, ok := ts.Outcome(req.Metric, req.Threshold)
		if !ok {
			continue
		}
		if err := st.PutOutcome(ctx, t.ID, o); err != nil {
			return nil, fmt.Errorf("storing the outcome of %s: %w", t.ID, err)
		}
		res.Stored++
		for _, off := range t.Outcomes {
			if off.Source == ingest.OfficialSource && off.Score != nil && math.Abs(*off.Score-ts.Recall) > 1e-9 {
				res.Disagreements = append(res.Disagreements, Disagreement{TraceID: t.ID, Ours: ts.Recall, Official: *off.Score, Metric: off.Metric})
			}
		}
	}
	sort.SliceStable(res.Scores, func(i, j int) bool {
		a, b := res.Scores[i], res.Scores[j]
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		return a.Trial < b.Trial
	})
	res.Aggregate = score.Summarize(res.Scores)
	return res, nil
}
