package main

import (
	"github.com/spf13/cobra"

	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// showJSON is the JSON form of `show`.
type showJSON struct {
	Trace      *trace.Trace        `json:"trace"`
	Steps      []trace.Step        `json:"steps"`
	Findings   []trace.Finding     `json:"findings"`
	Judgements []store.JudgeRecord `json:"judgements"`
}

func (a *app) showCommand() *cobra.Command {
	var opts report.TraceOptions
	var asJSON bool
	var sources []string
	cmd := &cobra.Command{
		Use:   "show TRACE",
		Short: "Print one trace step by step, with its findings at their steps",
		Long: `Print one trace step by step: messages, reasoning, each tool call with its result,
errors, and every finding at the steps it cites. TRACE is a trace id or a unique
prefix of one (see faultline ls). Long texts are cut to a few lines unless --full.

--json prints {trace, steps, findings, judgements}: trace holds the run's fields (id, format,
source, system, model, task, scenario, trial, started, ended, usage, diagnosis,
outcomes, meta), steps the steps (index, kind, role, agent, text, tool, args,
call_id, pair, exit_code, is_error, time, tokens, type) and findings the
annotations (mode, source, verdict, detector, steps, quote, confidence,
explanation, taxonomy, raw_label); judgements holds each LLM judge's record on the
trace (source, status, error, windows, samples, agreement, summary, task_success,
calls, tokens, cost).`,
		Example: `  faultline show 019bc2a7
  faultline show 019bc2a7 --full --source detector`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.readStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			id, err := st.Resolve(ctx, args[0])
			if err != nil {
				return err
			}
			t, err := st.Load(ctx, id)
			if err != nil {
				return err
			}
			kept := t.Findings[:0]
			for _, f := range t.Findings {
				if store.MatchSource(f.Source, sources) {
					kept = append(kept, f)
				}
			}
			t.Findings = kept
			judgements, err := st.TraceJudgements(ctx, id)
			if err != nil {
				return err
			}
			shown := judgements[:0]
			for _, r := range judgements {
				if store.MatchSource(r.Source, sources) {
					shown = append(shown, r)
				}
			}
			judgements = shown
			if asJSON {
				out := showJSON{Trace: t, Steps: t.Steps, Findings: t.Findings, Judgements: judgements}
				if out.Judgements == nil {
					out.Judgements = []store.JudgeRecord{}
				}
				if out.Findings == nil {
					out.Findings = []trace.Finding{}
				}
				// The steps and findings are printed once, beside the trace.
				header := *t
				header.Steps, header.Findings = nil, nil
				out.Trace = &header
				return writeJSON(a.stdout, out)
			}
			return report.WriteTrace(a.stdout, t, judgements, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Full, "full", false, "print every text in full")
	cmd.Flags().StringSliceVar(&sources, "source", nil, "only findings of these sources (detector, mad, mad:annotator_1, ...)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
