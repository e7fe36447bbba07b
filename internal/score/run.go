package score

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/faultline/faultline/internal/itbench"
	"github.com/faultline/faultline/stats"
	"github.com/faultline/faultline/trace"
)

// Status says whether and how a trace could be scored.
type Status string

const (
	Scored        Status = "scored"
	NoAnswer      Status = "no answer"      // no diagnosis at all: scored 0
	InvalidAnswer Status = "invalid answer" // a diagnosis that is not readable JSON: scored 0
	NoGroundTruth Status = "no ground truth"
	// Unreadable: the run wrote its answer file in a way the trace does not
	// show (a script, a patch to a version never shown), and nothing printed
	// it afterwards. Not scored: the answer exists and cannot be graded.
	Unreadable Status = "unreadable answer"
	// NotDiagnosis: the run's task is not a root-cause diagnosis (a
	// remediation plan): ground truth cannot grade it. Not scored.
	NotDiagnosis Status = "not a diagnosis"
)

// Unscored reports whether a status leaves the trace without a score.
func (s Status) Unscored() bool { return s == NoGroundTruth || s == Unreadable || s == NotDiagnosis }

// TraceScore is one trace's diagnosis scored.
type TraceScore struct {
	TraceID  string `json:"trace_id"`
	Model    string `json:"model"`
	Scenario string `json:"scenario"`
	Trial    string `json:"trial,omitempty"`
	Status   Status `json:"status"`
	// Diagnosis says where the answer was read from.
	Diagnosis string `json:"diagnosis,omitempty"`
	Repaired  string `json:"repaired,omitempty"`
	Problem   string `json:"problem,omitempty"`
	// GroundTruth is the file (and record) of the ground truth the trace
	// was held against.
	GroundTruth string `json:"ground_truth,omitempty"`
	*EntityScore
}

// ScoreTrace scores a trace against the ground truth of its scenario
// (scenario overrides the trace's own when set).
func ScoreTrace(t *trace.Trace, set Set, scenario string, opts Options) TraceScore {
	ts := TraceScore{TraceID: t.ID, Model: t.Model, Scenario: ScenarioID(t.Scenario), Trial: t.Trial}
	if scenario != "" {
		ts.Scenario = ScenarioID(scenario)
	}
	if task := itbench.ClassifyTask(t.Task); !task.Scored() {
		ts.Status, ts.Problem = NotDiagnosis, task.Why()
		return ts
	}
	gt, ok := set[ts.Scenario]
	if ok {
		ts.GroundTruth = gt.Source
	}
	if !ok {
		ts.Status = NoGroundTruth
		if ts.Scenario == "" {
			ts.Problem = "the trace's scenario is unknown (no Scenario-N or <scenario>/<trial> in its path); use --scenario"
		} else {
			ts.Problem = fmt.Sprintf("no ground truth for scenario %q", ts.Scenario)
		}
		return ts
	}
	d, err := DiagnosisOf(t)
	var unreadable *UnreadableError
	switch {
	case errors.As(err, &unreadable):
		ts.Status, ts.Problem = Unreadable, err.Error()
		return ts
	case errors.Is(err, ErrNoAnswer):
		ts.Status, ts.Problem = NoAnswer, err.Error()
		empty := ScoreEntities(gt, nil, nil, opts)
		ts.EntityScore = &empty
		return ts
	case err != nil:
		ts.Status, ts.Problem = InvalidAnswer, err.Error()
		empty := ScoreEntities(gt, nil, nil, opts)
		ts.EntityScore = &empty
		return ts
	}
	ts.Status, ts.Diagnosis, ts.Repaired = Scored, d.Source, d.Repaired
	es := ScoreEntities(gt, d.Predictions(), d.Propagations, opts)
	ts.EntityScore = &es
	return ts
}

// Metric names a per-trace number: precision, recall, f1, their @k forms
// (recall@1 … f1@5) and chain_f1.
type Metric string

// Value reads the metric from a scored trace; ok is false when it does not
// apply (chain_f1 without propagations in the ground truth).
func (m Metric) Value(s *EntityScore) (float64, bool) {
	name, kText, hasK := strings.Cut(string(m), "@")
	prf := s.PRF
	if hasK {
		k, err := strconv.Atoi(kText)
		if err != nil || k < 1 || k > MaxK {
			return 0, false
		}
		prf = s.AtK[k-1]
	}
	switch name {
	case "precision":
		return prf.Precision, true
	case "recall":
		return prf.Recall, true
	case "f1":
		return prf.F1, true
	case "chain_f1":
		if s.Chain == nil || hasK {
			return 0, false
		}
		return s.Chain.F1, true
	}
	return 0, false
}

// CheckMetric validates a metric name.
func CheckMetric(m Metric) error {
	if _, ok := m.Value(&EntityScore{Chain: &ChainScore{}}); !ok {
		return fmt.Errorf("unknown metric %q: use precision, recall, f1, recall@k (k = 1..%d), precision@k, f1@k or chain_f1", m, MaxK)
	}
	return nil
}

// OutcomeSource is the outcome source of faultline's own ITBench scoring.
const OutcomeSource = "itbench"

// Outcome turns a score into a stored outcome: success when the metric
// reaches the threshold.
//
// A trace left unscored for a reason the report should give (its task is
// not a diagnosis, its answer cannot be read) gets an undecided outcome:
// no score and no success, with the status and the problem in its detail.
// It also replaces whatever this source had stored before.
func (ts TraceScore) Outcome(m Metric, threshold float64) (trace.Outcome, bool) {
	metric := "root_cause_" + strings.ReplaceAll(string(m), "@", "_at_")
	if ts.EntityScore == nil {
		if ts.Status != Unreadable && ts.Status != NotDiagnosis {
			return trace.Outcome{}, false
		}
		detail, _ := json.Marshal(map[string]any{"status": ts.Status, "problem": ts.Problem, "ground_truth": ts.GroundTruth})
		return trace.Outcome{Source: OutcomeSource, Metric: metric, Detail: string(detail)}, true
	}
	v, ok := m.Value(ts.EntityScore)
	if !ok {
		return trace.Outcome{}, false
	}
	success := v >= threshold
	detail, _ := json.Marshal(map[string]any{"ground_truth": ts.GroundTruth,
		"status": ts.Status, "diagnosis": ts.Diagnosis, "problem": ts.Problem, "precision": ts.Precision,
		"recall": ts.Recall, "f1": ts.F1, "matched_roots": ts.MatchedRoots, "root_classes": ts.RootClasses,
		// What each blamed entity matched, so that the diagnosis can be shown
		// against the ground truth without reading it again.
		"predictions": ts.Predictions,
	})
	return trace.Outcome{Source: OutcomeSource, Metric: metric, Score: &v, Success: &success, Detail: string(detail)}, true
}

// Stat is a mean with its standard error.
type Stat struct {
	Mean   float64 `json:"mean"`
	StdErr float64 `json:"stderr"`
	N      int     `json:"n"`
}

func stat(xs []float64) Stat {
	var r stats.Running
	for _, x := range xs {
		r.Add(x)
	}
	s := Stat{N: r.N()}
	s.Mean, _ = r.Mean()
	if v, ok := r.Variance(); ok {
		// The standard error of the mean, from the sample standard deviation.
		s.StdErr = math.Sqrt(v / float64(r.N()))
	}
	return s
}

// AggregateMetrics are the metrics averaged per scenario and overall.
var AggregateMetrics = []Metric{"precision", "recall", "f1", "recall@1", "f1@1", "f1@3", "chain_f1"}

// ScenarioSummary averages one scenario's trials.
type ScenarioSummary struct {
	Scenario string          `json:"scenario"`
	Trials   int             `json:"trials"`
	NoAnswer int             `json:"no_answer"` // trials with no or invalid answer (scored 0)
	Metrics  map[Metric]Stat `json:"metrics"`
	PassAt1  float64         `json:"pass_at_1"` // share of trials with recall 1
}

// Aggregate is the cohort's scores: per scenario the mean over trials,
// overall the mean of scenario means.
type Aggregate struct {
	Scenarios []ScenarioSummary `json:"scenarios"`
	Overall   map[Metric]Stat   `json:"overall"`
	PassAt1   Stat              `json:"pass_at_1"`
	Trials    int               `json:"trials"`
	NoAnswer  int               `json:"no_answer"`
	Unscored  int               `json:"unscored"` // traces left without a score
	// UnscoredBy counts the unscored traces by why: no ground truth, not a
	// diagnosis task, an answer the trace does not show.
	UnscoredBy map[Status]int `json:"unscored_by"`
}

// Summarize aggregates trace scores.
func Summarize(scores []TraceScore) Aggregate {
	by := map[string][]TraceScore{}
	agg := Aggregate{Overall: map[Metric]Stat{}, UnscoredBy: map[Status]int{}}
	for _, ts := range scores {
		if ts.EntityScore == nil {
			agg.Unscored++
			agg.UnscoredBy[ts.Status]++
			continue
		}
		by[ts.Scenario] = append(by[ts.Scenario], ts)
	}
	ids := make([]string, 0, len(by))
	for id := range by {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return scenarioLess(ids[i], ids[j]) })
	means := map[Metric][]float64{}
	var passes []float64
	for _, id := range ids {
		trials := by[id]
		sum := ScenarioSummary{Scenario: id, Trials: len(trials), Metrics: map[Metric]Stat{}}
		for _, m := range AggregateMetrics {
			var xs []float64
			for _, ts := range trials {
				if v, ok := m.Value(ts.EntityScore); ok {
					xs = append(xs, v)
				}
			}
			if len(xs) > 0 {
				sum.Metrics[m] = stat(xs)
				means[m] = append(means[m], sum.Metrics[m].Mean)
			}
		}
		passed := 0
		for _, ts := range trials {
			if ts.Recall == 1 {
				passed++
			}
			if ts.Status != Scored {
				sum.NoAnswer++
			}
		}
		sum.PassAt1 = float64(passed) / float64(len(trials))
		passes = append(passes, sum.PassAt1)
		agg.Trials += sum.Trials
		agg.NoAnswer += sum.NoAnswer
		agg.Scenarios = append(agg.Scenarios, sum)
	}
	for m, xs := range means {
		agg.Overall[m] = stat(xs)
	}
	agg.PassAt1 = stat(passes)
	return agg
}

// scenarioLess orders numeric ids numerically, others as text after them.
func scenarioLess(a, b string) bool {
	na, errA := strconv.Atoi(a)
	nb, errB := strconv.Atoi(b)
	switch {
	case errA == nil && errB == nil:
		return na < nb
	case errA == nil:
		return true
	case errB == nil:
		return false
	}
	return a < b
}
