package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/store"
)

func (a *app) lsCommand() *cobra.Command {
	var f store.Filter
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the traces in the database",
		Long: `List the traces in the database, ordered by model and id, with filters. The
filters are those of report, export, judge --where and eval, with the same meaning:
--model takes a model's canonical name or any way it is written (openai/gpt-oss-120b
and gpt-oss-120b select the same traces; aliases in faultline.yaml), --mode keeps
the traces on which a mode is present, --source the traces an annotation source
annotated (and --mode then counts its findings alone), --search the traces with a
step holding the words. Filters of several values keep traces with any of them,
but --mode keeps traces with all of its modes.
--json prints an array of {id, format, system, model, task, scenario, trial,
steps, source, outcome}; outcome is null or {source, metric, score, success, detail}.`,
		Example: `  faultline ls
  faultline ls --model gpt-oss-120b --outcome failure
  faultline ls --mode FM-1.3 --source judge --search "agent_output.json"
  faultline ls --trace-format mad --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if f.Aliases, err = a.modelAliases(); err != nil {
				return err
			}
			st, err := a.readStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			traces, err := st.List(cmd.Context(), f)
			if err != nil {
				return err
			}
			if asJSON {
				if traces == nil {
					traces = []store.Summary{}
				}
				return writeJSON(a.stdout, traces)
			}
			if len(traces) == 0 {
				why, err := noMatch(cmd.Context(), st, f)
				if err != nil {
					return err
				}
				fmt.Fprintln(a.stderr, why)
				return nil
			}
			table := report.Table{Header: []string{"ID", "MODEL", "FORMAT", "STEPS", "OUTCOME", "TASK"}}
			for _, t := range traces {
				table.Rows = append(table.Rows, []string{t.ID, orDash(t.Model), t.Format, fmt.Sprint(t.Steps), report.OutcomeText(t.Outcome), report.TaskTitle(t.Task, 60)})
			}
			return table.Write(a.stdout)
		},
	}
	registerFilters(cmd, &f, filterNames()...)
	deprecatedAlias(cmd, "format", filterTraceFormat)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func oneOf(s string, options []string) bool {
	for _, o := range options {
		if s == o {
			return true
		}
	}
	return false
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
