package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/analyze"
	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/report"
	"github.com/faultline/faultline/score"
	"github.com/faultline/faultline/store"
)

// analyzeJSON is the JSON form of `analyze`.
type analyzeJSON struct {
	Ingest  *ingestResult        `json:"ingest,omitempty"`
	Scores  *analyze.ScoreResult `json:"scores,omitempty"`
	Summary *analyze.Summary     `json:"summary"`
}

func (a *app) analyzeCommand() *cobra.Command {
	var asJSON bool
	var sources []string
	var sf scoreFlags
	by := "model"
	cmd := &cobra.Command{
		Use:   "analyze [PATH...]",
		Short: "Ingest traces, run the detectors, and summarise failure modes per model",
		Long: `Ingest the traces under PATH (as faultline ingest does), run the detectors on every
one of them, score ITBench runs against ground truth (found among the files under
PATH, or given with --ground-truth; see faultline score), and print a per-model
summary: traces, outcomes, and how many traces show each failure mode. Without
PATH, the whole database is summarised with the outcomes already stored.

Modes are counted from every annotation source (detectors, bundled dataset labels)
unless --source picks some. --json prints {ingest, scores, summary}; scores is as in
faultline score --json; summary holds by,
traces, sources, groups[] and total, each group with name, traces, succeeded,
failed, unscored, with_modes and modes (mode code → number of traces).`,
		Example: `  faultline analyze examples/
  faultline analyze --source detector ../runs/
  faultline analyze --by system --source mad MAD_human_labelled_dataset.json
  faultline analyze --json > summary.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			var out analyzeJSON
			filter := store.Filter{}
			var groundTruthFiles []string
			if len(args) > 0 {
				res, err := a.ingest(ctx, st, args, true, asJSON)
				if err != nil {
					return err
				}
				out.Ingest = res
				if !asJSON && !a.quiet {
					fmt.Fprintln(a.stderr, res.line())
				}
				filter.Select = &store.Selection{IDs: res.TraceIDs, Files: res.summary.UnchangedFiles}
				for _, f := range res.summary.SkippedFiles {
					if score.LooksLikeGroundTruthFile(f) {
						groundTruthFiles = append(groundTruthFiles, f)
					}
				}
			}
			traces, err := st.List(ctx, filter)
			if err != nil {
				return err
			}
			if err := a.redetect(cmd, st, traces); err != nil {
				return err
			}
			req, problems, err := sf.request(groundTruthFiles)
			if err != nil {
				return err
			}
			if req != nil {
				for _, p := range problems {
					fmt.Fprintf(a.stderr, "notice: %s\n", p)
				}
				req.Traces = traces
				if out.Scores, err = analyze.ScoreStored(ctx, st, *req); err != nil {
					return err
				}
				if !asJSON && !a.quiet {
					fmt.Fprintf(a.stderr, "scored %d traces against %d incidents of ground truth\n", out.Scores.Stored, len(req.GroundTruth))
				}
				// Re-read the traces for their new outcomes.
				if traces, err = st.List(ctx, filter); err != nil {
					return err
				}
			}
			out.Summary, err = analyze.Summarize(ctx, st, traces, by, sources)
			if err != nil {
				return err
			}
			if asJSON {
				err = writeJSON(a.stdout, out)
			} else {
				err = report.WriteSummary(a.stdout, out.Summary)
			}
			if err != nil {
				return err
			}
			if out.Ingest != nil && out.Ingest.Errors > 0 {
				return errDataProblems
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&sources, "source", nil, "count modes from these annotation sources only (detector, mad, mad:annotator_1, ...)")
	cmd.Flags().StringVar(&by, "by", by, "group by model, system or scenario")
	sf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// redetect runs the current detectors on stored traces whose detector
// findings came from another detector set (or from none).
func (a *app) redetect(cmd *cobra.Command, st *store.Store, traces []store.Summary) error {
	ctx := cmd.Context()
	version := detect.Version(detect.All)
	ids := make([]string, len(traces))
	for i, t := range traces {
		ids[i] = t.ID
	}
	with, err := st.DetectedWith(ctx, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if with[id] == version {
			continue
		}
		t, err := st.Load(ctx, id)
		if err != nil {
			return err
		}
		findings, errs := detect.Run(t, detect.All)
		for _, err := range errs {
			a.log.Error("detector finding rejected", "err", err)
		}
		if err := st.ReplaceFindings(ctx, id, detect.Source, findings, version); err != nil {
			return err
		}
	}
	return nil
}
