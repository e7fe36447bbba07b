package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/internal/export"
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

The filters are those of ls, with the same meaning (--trace-format selects the trace
format, --format the output's); --source keeps the traces an annotation source
annotated and writes its findings only.`,
		Example: `  faultline export --format csv -o modes.csv
  faultline export --format jsonl --findings --model gpt-oss-120b -o findings.jsonl
  faultline export --format otlp -o evaluations.jsonl
  faultline export --format otlp --signal spans --trace-format otlp-proto |
    while read -r doc; do curl -s -H 'Content-Type: application/json' -d "$doc" http://localhost:6006/v1/traces; done`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if !oneOf(format, export.Formats) {
				return fmt.Errorf("--format must be one of %s, not %q", strings.Join(export.Formats, ", "), format)
			}
			if opts.Filter.Aliases, err = a.modelAliases(); err != nil {
				return err
			}
			opts.Sources = opts.Filter.Sources
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
	registerFilters(cmd, &opts.Filter, filterNames()...)
	cmd.MarkFlagRequired("format")
	return cmd
}
