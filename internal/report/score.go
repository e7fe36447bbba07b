package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/faultline/faultline/internal/pipeline"
	"github.com/faultline/faultline/internal/text"

	"github.com/faultline/faultline/internal/itbench"
	"github.com/faultline/faultline/internal/score"
)

// WriteScores prints scored traces (with, when details is set, each
// prediction and the group it matched), then the per-scenario and overall
// aggregates, then any disagreement with the official scorer.
func WriteScores(w io.Writer, res *pipeline.ScoreResult, details bool) error {
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
	for _, st := range []score.Status{score.NotDiagnosis, score.Unreadable, score.NoGroundTruth} {
		if n := agg.UnscoredBy[st]; n > 0 {
			fmt.Fprintf(w, "%s left unscored: %s.\n", text.Plural(n, "trace", "traces"), unscoredWhy[st])
		}
	}
	writeChanges(w, res)
	if len(res.Disagreements) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nDisagreements with the official scorer (%d):\n", len(res.Disagreements))
	for _, d := range res.Disagreements {
		fmt.Fprintf(w, "  %s: recall ours %s, official %s\n", d.TraceID, num(d.Ours), num(d.Official))
	}
	return nil
}

// unscoredWhy says why traces of each unscored status have no score.
var unscoredWhy = map[score.Status]string{
	score.NotDiagnosis:  "their task is not a root-cause diagnosis (a remediation plan, say), which this ground truth does not grade",
	score.Unreadable:    "they wrote agent_output.json in a way the trace does not show (a script, a patch to an unseen version) and never printed it",
	score.NoGroundTruth: "no ground truth for their scenario",
}

// writeChanges says how the stored outcomes change (or, on a dry run,
// would), listing each changed one, and which traces were left to the
// ground truth beside them.
func writeChanges(w io.Writer, res *pipeline.ScoreResult) {
	c := res.Changes
	verb := "outcomes"
	if res.DryRun {
		verb = "dry run, nothing stored; outcomes that would be"
	}
	fmt.Fprintf(w, "\n%s: %d new, %d changed, %d unchanged.\n", verb, c.New, c.Changed, c.Unchanged)
	for _, ch := range c.List {
		fmt.Fprintf(w, "  %s (%s): %s → %s\n", ch.TraceID, orDash(ch.Model), OutcomeText(ch.Before), OutcomeText(ch.After))
	}
	if len(res.Elsewhere) > 0 {
		by := map[string]int{}
		var files []string
		for _, e := range res.Elsewhere {
			if by[e.GroundTruth] == 0 {
				files = append(files, e.GroundTruth)
			}
			by[e.GroundTruth]++
		}
		for _, f := range files {
			fmt.Fprintf(w, "%s left out: a ground truth of their own lies beside them (%s), and only it grades them.\n", text.Plural(by[f], "trace", "traces"), f)
		}
	}
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
	case ts.Repaired != "":
		return "agent_output.json (repaired)"
	case strings.HasPrefix(ts.Diagnosis, "step"), strings.HasPrefix(ts.Diagnosis, itbench.AnswerFile+" "):
		// Which step showed the answer, and how.
		return ts.Diagnosis
	}
	return "agent_output.json (run directory)"
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
