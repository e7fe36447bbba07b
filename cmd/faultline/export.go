package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/internal/export"
	"github.com/faultline/faultline/internal/store"
)

func (a *app) exportCommand() *cobra.Command {
	var opts export.Options
	var format, out string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write stored traces and findings as OTLP, CSV or JSON Lines",
		Long: `Write the stored traces and their findings for other tools.

--format otlp writes each finding as an OpenTelemetry gen_ai.evaluation.result event
(GenAI semantic conventions: gen_ai.evaluation.name, .score.label = the verdict,
.score.value = the confidence, .explanation with the quoted evidence, plus
faultline.mode, faultline.source, faultline.steps), tied to the trace and span it is
about: for traces received or ingested from OpenTelemetry, their own trace id and the
span of the first step the finding cites (the root span when it cites none). Output
is OTLP/JSON, one document a line, one line per trace with findings. --signal logs
(the default) writes log records as the conventions define events, for an
OpenTelemetry collector; --signal spans writes each finding as a zero-length span
under the span it is about, carrying the event, for backends that take traces only
(Phoenix, Langfuse): POST each line to their OTLP/HTTP traces endpoint.

--format csv and jsonl write one row per trace and mode (every MAST mode and system
failure, present or not: the mean of present is the prevalence), or with --findings
one row per finding. Columns are listed in the README; in CSV, lists are joined with
";" and a missing value is an empty cell.

Filters are those of ls (--trace-format selects the trace format); --source keeps
the findings of some annotation sources only.`,
		Example: `  faultline export --format csv -o modes.csv
  faultline export --format jsonl --findings --model gpt-oss-120b -o findings.jsonl
  faultline export --format otlp -o evaluations.jsonl
  faultline export --format otlp --signal spans --trace-format otlp-proto |
    while read -r doc; do curl -s -H 'Content-Type: application/json' -d "$doc" http://localhost:6006/v1/traces; done`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !oneOf(format, export.Formats) {
				return fmt.Errorf("--format must be one of %s, not %q", strings.Join(export.Formats, ", "), format)
			}
			if opts.Filter.Outcome != "" && !oneOf(opts.Filter.Outcome, store.OutcomeFilters) {
				return fmt.Errorf("--outcome must be one of %s, not %q", strings.Join(store.OutcomeFilters, ", "), opts.Filter.Outcome)
			}
			st, err := a.readStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			w := a.stdout
			var file *os.File
			if out != "" && out != "-" {
				if file, err = os.Create(out); err != nil {
					return err
				}
				defer file.Close()
				w = file
			}
			sum, err := export.Write(cmd.Context(), st, w, format, opts)
			if err != nil {
				return err
			}
			if file != nil {
				if err := file.Close(); err != nil {
					return err
				}
			}
			if !a.quiet {
				fmt.Fprintf(a.stderr, "exported %d traces, %d rows\n", sum.Traces, sum.Rows)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "", "`FORMAT` to write: otlp, csv or jsonl (required)")
	f.StringVarP(&out, "output", "o", "", "write to `FILE` instead of standard output")
	f.BoolVar(&opts.Findings, "findings", false, "csv, jsonl: one row per finding instead of per trace and mode")
	f.StringVar(&opts.Signal, "signal", "logs", "otlp: write findings as logs (events) or spans")
	f.StringSliceVar(&opts.Sources, "source", nil, "only findings of these annotation `SOURCE`s (detector, judge:<model>, or a prefix such as mad)")
	f.StringVar(&opts.Filter.Model, "model", "", "only traces of this model")
	f.StringVar(&opts.Filter.Format, "trace-format", "", "only traces of this trace format (codex, mad, otlp-json, otlp-proto, ...)")
	f.StringVar(&opts.Filter.System, "system", "", "only traces of this system")
	f.StringVar(&opts.Filter.Scenario, "scenario", "", "only traces of this scenario")
	f.StringVar(&opts.Filter.Outcome, "outcome", "", "only traces whose outcome is success, failure or unknown")
	f.StringSliceVar(&opts.Filter.Paths, "path", nil, "only traces ingested from these files or directories")
	f.IntVar(&opts.Filter.Limit, "limit", 0, "at most this many traces")
	cmd.MarkFlagRequired("format")
	return cmd
}
