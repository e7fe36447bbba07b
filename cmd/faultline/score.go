package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/faultline/faultline/internal/pipeline"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/score"
	"github.com/faultline/faultline/internal/store"
)

// scoreFlags are the settings of ITBench scoring, shared by score and analyze.
type scoreFlags struct {
	groundTruth string
	incident    string
	strictKind  bool
	namespace   string
	metric      string
	threshold   float64
	dryRun      bool // score and compare, store nothing (score only)
}

func (f *scoreFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.groundTruth, "ground-truth", "", "ITBench ground truth: a file (ground_truths.json, groundtruth_v1.yaml, groundtruth.yaml) or a directory of them")
	cmd.Flags().StringVar(&f.incident, "incident", "", "score every trace against this incident `ID` of the ground truth (default: each trace's scenario, from its path)")
	deprecatedAlias(cmd, "scenario", "incident")
	cmd.Flags().BoolVar(&f.strictKind, "strict-kind", false, "require kinds to agree exactly (by default Pod, Deployment, ReplicaSet and Service of one app are interchangeable)")
	cmd.Flags().StringVar(&f.namespace, "namespace", "", "score only predictions in this namespace (or with none), as the leaderboard does")
	cmd.Flags().StringVar(&f.metric, "metric", "recall", "the metric that decides success: precision, recall, f1, their @k forms (recall@3) or chain_f1")
	cmd.Flags().Float64Var(&f.threshold, "threshold", 1, "success when the metric reaches this value")
}

// request loads the ground truth and builds a scoring request.
func (f *scoreFlags) request(extraFiles []string) (*pipeline.ScoreRequest, []string, error) {
	if err := score.CheckMetric(score.Metric(f.metric)); err != nil {
		return nil, nil, err
	}
	files := extraFiles
	if f.groundTruth != "" {
		var err error
		if files, err = score.Files(f.groundTruth); err != nil {
			return nil, nil, fmt.Errorf("ground truth: %w", err)
		}
		if len(files) == 0 {
			return nil, nil, fmt.Errorf("ground truth: %s: no ground truth found", f.groundTruth)
		}
	}
	if len(files) == 0 {
		return nil, nil, nil
	}
	set, problems, err := score.LoadFiles(files, f.incident)
	if err != nil {
		return nil, nil, fmt.Errorf("ground truth: %w", err)
	}
	if len(set) == 0 {
		return nil, nil, fmt.Errorf("ground truth: %s: no incident found", strings.Join(files, ", "))
	}
	return &pipeline.ScoreRequest{
		GroundTruth: set, Files: files, Scenario: f.incident, Metric: score.Metric(f.metric), Threshold: f.threshold, DryRun: f.dryRun,
		Options: score.Options{Matcher: score.Matcher{StrictKind: f.strictKind}, Namespace: f.namespace},
	}, problems, nil
}

// scoreJSON is the JSON form of `score`.
type scoreJSON struct {
	*pipeline.ScoreResult
	Labels *labelsResult `json:"labels,omitempty"`
}

type labelsResult struct {
	Stored   int      `json:"stored"`
	Unknown  []string `json:"unknown_traces"`
	Problems []string `json:"problems"`
}

func (a *app) scoreCommand() *cobra.Command {
	var sf scoreFlags
	var filter store.Filter
	var labels string
	var asJSON, details bool
	cmd := &cobra.Command{
		Use:   "score --ground-truth PATH | --labels FILE",
		Short: "Score diagnoses against ITBench ground truth and store the outcomes",
		Long: `Score each stored trace's diagnosis against ITBench ground truth, deterministically,
and store the outcome with the trace (source "itbench"). Only runs of ITBench's Zero
agent are scored (system itbench-zero, the incident read from the run's path
<scenario>/<trial> or Scenario-N/), never a trace whose id merely equals an incident
number, unless --incident names the incident. A run that has a ground truth of its own
beside it (in its directory or an ancestor, such as a simulated cohort's
ground_truths.json) is held only against that file, and left out when another is given.

The task of each run is read from its prompt: only a root-cause diagnosis is scored. A
remediation run ("Generate Remediation Plan") is left unscored, and says why.

The diagnosis is the run directory's agent_output.json; else what the run's own writes
left in that file, a write counting only when its tool call succeeded (shell
redirection, heredocs, echo, tee, apply_patch adds and updates, file tools, scripts
that open the file for writing), with a later print of the file (cat, jq .) as the best
evidence of what is on disk; else a JSON block in its final message. The "answer"
column says which step showed it and how. A run with no diagnosis is "no answer" and
one whose answer is not readable JSON (after unambiguous repairs) is "invalid answer":
both score 0 and are counted apart. A run that wrote the file in a way the trace does
not show (a script, and nothing printed the file after it) is "unreadable answer": it
is reported with its step and left unscored, never scored as no answer.

Each outcome is compared with the one the trace had before: new, changed or unchanged
are counted, and every change is listed. --dry-run shows that without storing.

A prediction (a contributing entity, in answer order) matches a ground-truth group
when the kinds agree (leniently across workload kinds unless --strict-kind), the
namespaces agree, and the name equals the group's name or matches one of its filters
(Python re.search semantics). Aliases make groups one. Per trace: precision, recall
(distinct root causes found / root causes), F1, and @k for k = 1..5 over the
predictions deduplicated by matched group, plus the propagation-chain F1 when the
ground truth has propagations. Per scenario the mean over trials; overall the mean of
scenario means ± standard error; pass@1 is the share of trials with recall 1. Success
is recall 1 unless --metric and --threshold say otherwise.

--labels FILE stores outcomes from a file instead (source "labels"): CSV with a header
naming trace_id and success and/or score, or JSON (an array, or one object per line)
with the same fields; success accepts true/false, 1/0, yes/no, pass/fail, and a score
without success succeeds when it reaches --threshold. A trace is named by its id or a
prefix of it that names it alone; labels of traces not in the database are reported
and skipped. The exit status is 1 when a line could not be read or a prefix names
several traces (the other lines are stored).

--json prints {traces, aggregate, disagreements, stored, dry_run, changes,
other_ground_truth, labels}.`,
		Example: `  faultline score --ground-truth examples/itbench-zero/ground_truths.json
  faultline score --ground-truth ground_truths.json --dry-run
  faultline score --ground-truth ITBench/scenarios/ --model gpt-oss-120b --metric recall@3
  faultline score --labels outcomes.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if sf.groundTruth == "" && labels == "" {
				return fmt.Errorf("give --ground-truth PATH, --labels FILE, or both")
			}
			req, problems, err := sf.request(nil)
			if err != nil {
				return err
			}
			if filter.Aliases, err = a.modelAliases(); err != nil {
				return err
			}
			for _, p := range problems {
				fmt.Fprintf(a.stderr, "notice: %s\n", p)
			}
			st, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			out := scoreJSON{ScoreResult: pipeline.NewScoreResult(sf.dryRun)}
			if labels != "" {
				if out.Labels, err = a.storeOutcomeLabels(cmd, st, labels, sf.threshold); err != nil {
					return err
				}
			}
			if req != nil {
				if req.Traces, err = st.List(ctx, filter); err != nil {
					return err
				}
				if out.ScoreResult, err = pipeline.ScoreStored(ctx, st, *req); err != nil {
					return err
				}
			}
			if err := a.writeScores(out, req, sf, details, asJSON); err != nil {
				return err
			}
			if out.Labels != nil && len(out.Labels.Problems) > 0 {
				return errDataProblems
			}
			return nil
		},
	}
	sf.register(cmd)
	cmd.Flags().StringVar(&labels, "labels", "", "store outcomes from this CSV or JSON file of trace_id → success/score")
	cmd.Flags().BoolVar(&sf.dryRun, "dry-run", false, "score and show what would change in the stored outcomes, storing nothing")
	registerFilters(cmd, &filter, filterModel, filterSystem, filterPath)
	cmd.Flags().BoolVar(&details, "details", false, "list every prediction with the ground-truth group it matched")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// writeScores prints what score did.
func (a *app) writeScores(out scoreJSON, req *pipeline.ScoreRequest, sf scoreFlags, details, asJSON bool) error {
	if asJSON {
		return writeJSON(a.stdout, out)
	}
	if req == nil {
		return nil
	}
	if len(out.Scores) == 0 {
		fmt.Fprintln(a.stderr, "no ITBench traces to score: ingest some first, or give --incident for traces without a Scenario-N path")
		return nil
	}
	stored := "outcomes stored"
	if sf.dryRun {
		stored = "dry run: nothing stored"
	}
	fmt.Fprintf(a.stdout, "Scored %d traces against %d incidents (success: %s ≥ %g); %s.\n\n", len(out.Scores), len(req.GroundTruth), sf.metric, sf.threshold, stored)
	return report.WriteScores(a.stdout, out.ScoreResult, details)
}

// storeOutcomeLabels stores the outcomes of a labels file; labels of traces
// not in the database are listed, not stored. A trace may be named by a
// prefix of its id that names it alone, as show takes it.
func (a *app) storeOutcomeLabels(cmd *cobra.Command, st database, path string, threshold float64) (*labelsResult, error) {
	ctx := cmd.Context()
	labels, problems, err := score.LoadOutcomeLabels(path)
	if err != nil {
		return nil, err
	}
	res := &labelsResult{Unknown: []string{}, Problems: []string{}}
	for _, p := range problems {
		res.Problems = append(res.Problems, p.Error())
		fmt.Fprintf(a.stderr, "error: %v\n", p)
	}
	for _, l := range labels {
		id, err := st.Resolve(ctx, l.TraceID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			res.Unknown = append(res.Unknown, l.TraceID)
			fmt.Fprintf(a.stderr, "notice: %s:%d: no trace %q in the database\n", path, l.Line, l.TraceID)
			continue
		case err != nil:
			// Ambiguous (a prefix of several traces' ids), or unreadable.
			res.Problems = append(res.Problems, fmt.Sprintf("%s:%d: %v", path, l.Line, err))
			fmt.Fprintf(a.stderr, "error: %s:%d: %v\n", path, l.Line, err)
			continue
		case id != l.TraceID:
			a.log.Info("a trace named by a prefix of its id", "file", path, "line", l.Line, "prefix", l.TraceID, "trace", id)
		}
		if err := st.PutOutcome(ctx, id, l.Outcome(threshold)); err != nil {
			return nil, err
		}
		res.Stored++
	}
	fmt.Fprintf(a.stderr, "stored %d outcomes from %s\n", res.Stored, path)
	return res, nil
}
