package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/faultline/faultline/analyze"
	"github.com/faultline/faultline/score"
)

// WriteScores prints scored traces (with, when details is set, each
// prediction and the group it matched), then the per-scenario and overall
// aggregates, then any disagreement with the official scorer.
func WriteScores(w io.Writer, res *analyze.ScoreResult, details bool) error {
	traces := Table{Header: []string{"trace", "model", "scenario", "trial", "answer", "P", "R", "F1", "root found"}}
	for _, ts := range res.Scores {
		row := []string{ts.TraceID, orDash(ts.Model), orDash(ts.Scenario), orDash(ts.Trial), answerText(ts)}
		if ts.EntityScore == nil {
			row = append(row, "-", "-", "-", ts.Problem)
		} else {
			row = append(row, num(ts.Precision), num(ts.Recall), num(ts.F1), orDash(strings.Join(ts.MatchedRoots, ", ")))
		}
		traces.Rows = append(traces.Rows, row)
	}
	if err := traces.Write(w); err != nil {
		return err
	}
	if details {
		writePredictions(w, res.Scores)
	}
	agg := res.Aggregate
	scenarios := Table{Header: []string{"scenario", "trials", "no answer"}, NumericRight: true}
	for _, m := range score.AggregateMetrics {
		scenarios.Header = append(scenarios.Header, string(m))
	}
	scenarios.Header = append(scenarios.Header, "pass@1")
	for _, s := range agg.Scenarios {
		row := []string{s.Scenario, fmt.Sprint(s.Trials), fmt.Sprint(s.NoAnswer)}
		for _, m := range score.AggregateMetrics {
			row = append(row, statText(s.Metrics[m], false))
		}
		scenarios.Rows = append(scenarios.Rows, append(row, num(s.PassAt1)))
	}
	overall := []string{"all", fmt.Sprint(agg.Trials), fmt.Sprint(agg.NoAnswer)}
	for _, m := range score.AggregateMetrics {
		overall = append(overall, statText(agg.Overall[m], true))
	}
	scenarios.Rows = append(scenarios.Rows, append(overall, statText(agg.PassAt1, true)))
	fmt.Fprintln(w)
	if err := scenarios.Write(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n\"all\" is the mean of the %d scenario means ± its standard error; a scenario's cell is the mean over its trials.\n", len(agg.Scenarios))
	if agg.Unscored > 0 {
		fmt.Fprintf(w, "%d traces could not be scored (no ground truth for their scenario).\n", agg.Unscored)
	}
	if len(res.Disagreements) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nDisagreements with the official scorer (%d):\n", len(res.Disagreements))
	for _, d := range res.Disagreements {
		fmt.Fprintf(w, "  %s: recall ours %s, official %s\n", d.TraceID, num(d.Ours), num(d.Official))
	}
	return nil
}

func writePredictions(w io.Writer, scores []score.TraceScore) {
	for _, ts := range scores {
		if ts.EntityScore == nil || len(ts.Predictions) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s (%s, scenario %s, trial %s), from %s:\n", ts.TraceID, orDash(ts.Model), ts.Scenario, orDash(ts.Trial), ts.Diagnosis)
		for i, p := range ts.Predictions {
			verdict := "no group"
			switch {
			case p.Dropped:
				verdict = "dropped: outside the namespace"
			case p.Duplicate:
				verdict = "duplicate of an earlier prediction"
			case p.Root:
				verdict = "root cause (group " + p.Group + ")"
			case p.Group != "":
				verdict = "not a root cause (group " + p.Group + ")"
			}
			fmt.Fprintf(w, "  %d. %s → %s\n", i+1, p.Entity, verdict)
		}
	}
}

func answerText(ts score.TraceScore) string {
	switch {
	case ts.Status != score.Scored:
		return string(ts.Status)
	case strings.HasPrefix(ts.Diagnosis, "step"):
		return ts.Diagnosis
	case ts.Repaired != "":
		return "agent_output.json (repaired)"
	}
	return "agent_output.json"
}

func num(x float64) string { return fmt.Sprintf("%.2f", x) }

func statText(s score.Stat, withErr bool) string {
	if s.N == 0 {
		return "-"
	}
	if withErr && s.N > 1 {
		return fmt.Sprintf("%.2f±%.2f", s.Mean, s.StdErr)
	}
	return num(s.Mean)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
