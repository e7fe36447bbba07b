package main

import (
	"context"
	"fmt"
	"os"

	"github.com/faultline/faultline/internal/pipeline"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/score"
	"github.com/faultline/faultline/internal/store"
)

// analyzeJSON is the JSON form of `analyze`.
type analyzeJSON struct {
	Ingest *ingestResult         `json:"ingest,omitempty"`
	Scores *pipeline.ScoreResult `json:"scores,omitempty"`
	Report *analyze.Report       `json:"report"`
}

func (a *app) analyzeCommand() *cobra.Command {
	var asJSON bool
	var cf cohortFlags
	var sf scoreFlags
	var inf ingestFlags
	cmd := &cobra.Command{
		Use:   "analyze [PATH...]",
		Short: "Ingest traces, run the detectors, score them, and print the cohort report",
		Long: `Ingest the traces under PATH (as faultline ingest does), run the detectors on every
one of them, score ITBench runs against ground truth (found among the files under
PATH, or given with --ground-truth; see faultline score), and print the cohort report
of those traces (see faultline report): per model, the outcomes, the prevalence of
each failure mode, the failure density, which modes are fatal and which benign,
co-occurrence, cascades and the interventions they call for. Without PATH, the report
covers the whole database with the outcomes already stored.

Modes count from every annotation source (detectors, bundled dataset labels, judges)
unless --source picks some (the report then covers the traces they annotated). --json prints {ingest, scores, report}: ingest as in
faultline ingest --json, scores as in faultline score --json (both left out when there
was nothing to do), report as faultline report --format json prints it.`,
		Example: `  faultline analyze examples/
  faultline analyze --source detector ../runs/
  faultline analyze --by system --source mad MAD_human_labelled_dataset.json
  faultline analyze --json > analysis.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			in, err := a.prepareCohort(cmd, st, args, &sf, inf, asJSON)
			if err != nil {
				return err
			}
			out := analyzeJSON{Ingest: in.ingest, Scores: in.scores}
			opt, err := a.cohortOptions(ctx, st, &cf, in.ids)
			if err != nil {
				return err
			}
			if out.Report, err = analyze.BuildReport(ctx, st, opt); err != nil {
				return err
			}
			if asJSON {
				err = writeJSON(a.stdout, out)
			} else {
				err = report.WriteText(a.stdout, out.Report)
			}
			if err != nil {
				return err
			}
			if !asJSON && !a.quiet {
				a.nextSteps(ctx, st, out.Report, in.ids)
			}
			if in.ingest != nil && in.ingest.Errors > 0 {
				return errDataProblems
			}
			return nil
		},
	}
	cf.register(cmd, filterSource)
	sf.register(cmd)
	inf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// nextSteps tells, on stderr, where the traces went and what to do next
// with them.
func (a *app) nextSteps(ctx context.Context, st database, r *analyze.Report, ids []string) {
	fmt.Fprintf(a.stderr, "\nThe traces are stored in %s. Next:\n", a.dbName())
	fl := "faultline"
	if a.dbPath != store.DefaultPath && os.Getenv("FAULTLINE_DB") != a.dbPath {
		fl += " --db " + a.dbName()
	}
	steps := [][2]string{{fl + " serve", "browse the traces, this report and its charts in a web UI"}}
	if len(ids) == 0 {
		if some, err := st.List(ctx, store.Filter{Limit: 1}); err == nil && len(some) > 0 {
			ids = []string{some[0].ID}
		}
	}
	if len(ids) > 0 {
		// A short prefix where it names the trace alone.
		id := ids[0]
		if short := id[:min(len(id), 8)]; short != id {
			if resolved, err := st.Resolve(ctx, short); err == nil && resolved == id {
				id = short
			}
		}
		steps = append(steps, [2]string{fl + " show " + id, "one trace step by step, each finding at its step"})
	}
	if !r.HasOutcomes() {
		steps = append(steps, [2]string{fl + " analyze --ground-truth DIR PATH", "score ITBench runs against ground truth, to tell fatal modes from benign ones"})
	}
	steps = append(steps, [2]string{fl + " judge --model MODEL", "add an LLM judge's findings (any OpenAI-compatible endpoint), for the modes no detector sees"})
	for _, s := range steps {
		fmt.Fprintf(a.stderr, "  %s\n      %s\n", s[0], s[1])
	}
}

// cohortInput is what prepareCohort did.
type cohortInput struct {
	ids    []string // the traces to report on; nil for the whole database
	ingest *ingestResult
	scores *pipeline.ScoreResult
}

// prepareCohort ingests the paths, if any, runs the current detectors where
// they have not run, and scores ITBench runs when ground truth is given or
// found among the paths: what analyze and check do before they report.
func (a *app) prepareCohort(cmd *cobra.Command, st database, paths []string, sf *scoreFlags, inf ingestFlags, quietOut bool) (*cohortInput, error) {
	ctx := cmd.Context()
	in := &cohortInput{}
	filter := store.Filter{}
	// A ground-truth file named among the paths is ground truth, not a trace
	// file in an unknown format; those found in directories are picked out
	// of the files the walk skipped.
	var groundTruthFiles, tracePaths []string
	for _, p := range paths {
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && score.LooksLikeGroundTruthFile(p) {
			groundTruthFiles = append(groundTruthFiles, p)
		} else {
			tracePaths = append(tracePaths, p)
		}
	}
	if len(tracePaths) > 0 {
		res, err := a.ingest(ctx, st, tracePaths, inf, true, quietOut, func(f string) {
			if score.LooksLikeGroundTruthFile(f) {
				groundTruthFiles = append(groundTruthFiles, f)
			}
		})
		if err != nil {
			return nil, err
		}
		in.ingest = res
		if !quietOut && !a.quiet {
			fmt.Fprintln(a.stderr, res.line())
		}
		filter.Select = &store.Selection{IDs: res.TraceIDs, Files: res.summary.UnchangedFiles}
	}
	traces, err := st.List(ctx, filter)
	if err != nil {
		return nil, err
	}
	if len(paths) > 0 {
		in.ids = summaryIDs(traces)
	}
	if err := a.redetect(cmd, st, traces); err != nil {
		return nil, err
	}
	req, problems, err := sf.request(groundTruthFiles)
	if err != nil || req == nil {
		return in, err
	}
	for _, p := range problems {
		fmt.Fprintf(a.stderr, "notice: %s\n", p)
	}
	req.Traces = traces
	if in.scores, err = pipeline.ScoreStored(ctx, st, *req); err != nil {
		return nil, err
	}
	if !quietOut && !a.quiet {
		fmt.Fprintf(a.stderr, "scored %d traces against %d incidents of ground truth\n", in.scores.Stored, len(req.GroundTruth))
	}
	return in, nil
}

// redetect renews the detector findings of traces stored by another
// detector set (see pipeline.Redetect).
func (a *app) redetect(cmd *cobra.Command, st database, traces []store.Summary) error {
	ds, err := a.detectors()
	if err != nil {
		return err
	}
	_, err = pipeline.Redetect(cmd.Context(), st, summaryIDs(traces), ds, a.rejectedFinding)
	return err
}

// rejectedFinding logs a finding whose evidence did not check out: a bug of
// its detector or rule, never shown.
func (a *app) rejectedFinding(err error) { a.log.Error("detector finding rejected", "err", err) }
