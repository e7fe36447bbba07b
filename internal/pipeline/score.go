package pipeline

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sort"

	"github.com/faultline/faultline/internal/itbench"
	"github.com/faultline/faultline/internal/score"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// Scorer is what scoring stored runs needs from a store.
type Scorer interface {
	Load(ctx context.Context, id string) (*trace.Trace, error)
	// PutOutcome stores an outcome, replacing the trace's outcome of the
	// same source.
	PutOutcome(ctx context.Context, traceID string, o trace.Outcome) error
}

// ScoreRequest says which traces to score and how.
type ScoreRequest struct {
	Traces      []store.Summary
	GroundTruth score.Set
	// Files are the ground-truth files GroundTruth was read from. A trace
	// that has a ground truth of its own beside it (see score.Beside) is
	// held only against that one, and only when it is among Files. Without
	// Files (a caller that built GroundTruth itself) every ITBench run is
	// held against GroundTruth.
	Files     []string
	Scenario  string // overrides every trace's scenario when set
	Options   score.Options
	Metric    score.Metric
	Threshold float64
	// DryRun scores and compares without storing anything.
	DryRun bool
}

// Disagreement is a trace whose official ITBench verdict differs from ours.
type Disagreement struct {
	TraceID  string  `json:"trace_id"`
	Ours     float64 `json:"ours"`
	Official float64 `json:"official"`
	Metric   string  `json:"metric"`
}

// ScoreResult is what ScoreStored did (or, on a dry run, would do).
type ScoreResult struct {
	Scores        []score.TraceScore `json:"traces"`
	Aggregate     score.Aggregate    `json:"aggregate"`
	Disagreements []Disagreement     `json:"disagreements"`
	Stored        int                `json:"stored"`
	DryRun        bool               `json:"dry_run"`
	// Changes compares each outcome with the one the trace had from the
	// same source before.
	Changes OutcomeChanges `json:"changes"`
	// Elsewhere lists the traces left out because a ground truth of their
	// own lies beside them and was not given.
	Elsewhere []Elsewhere `json:"other_ground_truth"`
}

// NewScoreResult is a result of no score yet, its lists empty rather than
// nil, so that its JSON holds arrays.
func NewScoreResult(dryRun bool) *ScoreResult {
	return &ScoreResult{Scores: []score.TraceScore{}, Disagreements: []Disagreement{}, DryRun: dryRun,
		Changes: OutcomeChanges{List: []OutcomeChange{}}, Elsewhere: []Elsewhere{}}
}

// OutcomeChanges counts what scoring did to stored outcomes, and lists the
// ones it changed.
type OutcomeChanges struct {
	New       int             `json:"new"`
	Changed   int             `json:"changed"`
	Unchanged int             `json:"unchanged"`
	List      []OutcomeChange `json:"list"`
}

// OutcomeChange is one stored outcome replaced by a different one.
type OutcomeChange struct {
	TraceID string         `json:"trace_id"`
	Model   string         `json:"model"`
	Before  *trace.Outcome `json:"before"`
	After   *trace.Outcome `json:"after"`
}

// Elsewhere is a trace scored only by the ground truth beside it.
type Elsewhere struct {
	TraceID     string `json:"trace_id"`
	GroundTruth string `json:"ground_truth"`
}

// ScoreStored scores the stored runs of ITBench's Zero agent against ground
// truth, stores each outcome (source "itbench") unless req.DryRun, counts
// how the stored outcomes change, and compares ours with the official
// scorer's where the run carried one.
//
// Only ITBench runs are scored (system itbench-zero, whose scenario comes
// from the run's path), never a trace whose scenario id merely equals an
// incident id, unless req.Scenario names the incident. A run with a ground
// truth of its own beside it (a simulated cohort shipping its own incidents
// under real incident ids) is held only against that one.
func ScoreStored(ctx context.Context, st Scorer, req ScoreRequest) (*ScoreResult, error) {
	res := NewScoreResult(req.DryRun)
	given := map[string]bool{}
	for _, f := range req.Files {
		given[absPath(f)] = true
	}
	beside := score.NewBeside()
	own := map[string]score.Set{}
	for _, sm := range req.Traces {
		if req.Scenario == "" && sm.System != itbench.System {
			continue // not an ITBench run, whatever its scenario id
		}
		t, err := st.Load(ctx, sm.ID)
		if err != nil {
			return nil, err
		}
		set := req.GroundTruth
		if req.Scenario == "" && len(req.Files) > 0 {
			if file := beside.Of(t.Source); file != "" {
				if !given[file] {
					res.Elsewhere = append(res.Elsewhere, Elsewhere{TraceID: t.ID, GroundTruth: file})
					continue
				}
				if own[file] == nil {
					if own[file], _, err = score.LoadFiles([]string{file}, ""); err != nil {
						return nil, fmt.Errorf("ground truth beside %s: %w", t.Source, err)
					}
				}
				set = own[file]
			}
		}
		ts := score.ScoreTrace(t, set, req.Scenario, req.Options)
		if ts.Status == score.NoGroundTruth && t.Scenario == "" && req.Scenario == "" {
			continue // not an ITBench run at all
		}
		res.Scores = append(res.Scores, ts)
		o, ok := ts.Outcome(req.Metric, req.Threshold)
		if !ok {
			continue
		}
		res.Changes.count(t, o)
		if !req.DryRun {
			if err := st.PutOutcome(ctx, t.ID, o); err != nil {
				return nil, fmt.Errorf("storing the outcome of %s: %w", t.ID, err)
			}
			res.Stored++
		}
		for _, off := range t.Outcomes {
			if off.Source == itbench.OfficialSource && off.Score != nil && ts.EntityScore != nil && math.Abs(*off.Score-ts.Recall) > 1e-9 {
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

// count compares the outcome o about to be stored with the one t had from
// the same source.
func (c *OutcomeChanges) count(t *trace.Trace, o trace.Outcome) {
	var before *trace.Outcome
	for i := range t.Outcomes {
		if t.Outcomes[i].Source == o.Source {
			before = &t.Outcomes[i]
		}
	}
	switch {
	case before == nil:
		c.New++
	case sameVerdict(before, &o):
		c.Unchanged++
	default:
		c.Changed++
		after := o
		c.List = append(c.List, OutcomeChange{TraceID: t.ID, Model: t.Model, Before: before, After: &after})
	}
}

// sameVerdict reports whether two outcomes say the same: metric, score and
// success.
func sameVerdict(a, b *trace.Outcome) bool {
	sameScore := (a.Score == nil) == (b.Score == nil) && (a.Score == nil || math.Abs(*a.Score-*b.Score) < 1e-9)
	sameSuccess := (a.Success == nil) == (b.Success == nil) && (a.Success == nil || *a.Success == *b.Success)
	return a.Metric == b.Metric && sameScore && sameSuccess
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
