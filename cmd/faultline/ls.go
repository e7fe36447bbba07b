package main

import (
	"fmt"
	"strings"

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
		Long: `List the traces in the database, ordered by model and id, with filters.
--json prints an array of {id, format, system, model, task, scenario, trial,
steps, source, outcome}; outcome is null or {source, metric, score, success, detail}.`,
		Example: `  faultline ls
  faultline ls --model gpt-oss-120b --outcome failure
  faultline ls --format mad --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.Outcome != "" && !oneOf(f.Outcome, store.OutcomeFilters) {
				return fmt.Errorf("--outcome must be one of %s, not %q", strings.Join(store.OutcomeFilters, ", "), f.Outcome)
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
	cmd.Flags().StringVar(&f.Model, "model", "", "only traces of this model")
	cmd.Flags().StringVar(&f.Format, "format", "", "only traces of this format (codex, mad)")
	cmd.Flags().StringVar(&f.System, "system", "", "only traces of this system (e.g. itbench-zero, ChatDev)")
	cmd.Flags().StringVar(&f.Scenario, "scenario", "", "only traces of this scenario")
	cmd.Flags().StringVar(&f.Outcome, "outcome", "", "only traces whose outcome is success, failure or unknown")
	cmd.Flags().StringSliceVar(&f.Paths, "path", nil, "only traces ingested from these files or directories")
	cmd.Flags().IntVar(&f.Limit, "limit", 0, "print at most this many traces")
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
