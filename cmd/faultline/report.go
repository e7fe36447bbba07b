package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/report"
)

// cohortFlags choose what a cohort report groups by and which annotation
// sources count; analyze and report share them.
type cohortFlags struct {
	by      string
	sources []string
}

func (f *cohortFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.by, "by", "model", "group by "+strings.Join(analyze.Groupings, ", "))
	cmd.Flags().StringSliceVar(&f.sources, "source", nil, "count modes from these annotation sources only (detector, judge:MODEL, mad, mad:annotator_1, human, ...)")
}

func (f *cohortFlags) options(ids []string) analyze.ReportOptions {
	return analyze.ReportOptions{By: f.by, Sources: f.sources, IDs: ids}
}

func (a *app) reportCommand() *cobra.Command {
	var cf cohortFlags
	var format, output string
	var compare bool
	cmd := &cobra.Command{
		Use:   "report [--compare A B]",
		Short: "The cohort report: which failure modes go with failure, how they cascade, and what to fix",
		Long: `Print the cohort report of every trace in the database, per model (or --by system or
scenario), from the findings and outcomes already stored (faultline analyze ingests,
detects and scores first, then prints the same report):

  1. Overview: traces, successes and failures, the outcome metric's mean, and the
     share of traces each annotation source annotated.
  2. Mode prevalence: the share of traces with each MAST mode, overall and in failed
     and successful traces.
  3. Failure density: distinct MAST modes per failed trace, and their distribution.
  4. Fatal and non-fatal modes: each mode in failed against successful traces, with
     the difference, the lift, the odds ratio, Fisher's exact test and its
     Benjamini-Hochberg q-value, and a class under the rule the report states:
     fatal (significantly more common in failures), non-fatal (common in successes
     and not fatal), inconclusive, or "too few successes to call".
  5. Co-occurrence: pairs of modes on the same trace, lift, phi and P(B | A).
  6. Cascades: the order in which modes first appear in failed traces, onsets,
     transitions, and whether the onset predicts how many modes follow.
  7. Interventions: ranked fixes for each group's fatal modes, with the figures that
     led to them and example traces.
  8. Harness and infrastructure failures (SYS codes), kept out of everything above.

A mode is present on a trace when any selected annotation source marks it present
(--source selects: a name, or a prefix before ":"). The outcome is each trace's
primary outcome. Intervals are 95% (Wilson for shares, Student t for means).

--compare A B sets two groups (models, systems, scenarios: whatever --by names) side
by side, with a test for every difference, and reports on those two only.

--format text (the default), md (GitHub Markdown), html (one self-contained page with
inline SVG charts, nothing fetched) or json (versioned: "schema": "` + analyze.ReportSchema + `";
faultline check reads it back). -o FILE writes to a file, in the format its extension
names (.md, .html, .json) unless --format says otherwise.`,
		Example: `  faultline report
  faultline report --source judge:gpt-4.1-mini --by model
  faultline report --format html -o report.html
  faultline report -o baseline.json
  faultline report --compare gpt-oss-120b gemini-3-flash-preview`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case compare && len(args) != 2:
				return fmt.Errorf("--compare takes two groups, got %d", len(args))
			case !compare && len(args) > 0:
				return fmt.Errorf("unexpected arguments %q (to compare two groups: --compare A B)", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("format") {
				format = formatOf(output)
			}
			if !slices.Contains(report.Formats, format) {
				return fmt.Errorf("--format must be one of %s", strings.Join(report.Formats, ", "))
			}
			ctx := cmd.Context()
			st, err := a.readStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			opt := cf.options(nil)
			if compare {
				opt.Compare = args
			}
			r, err := analyze.BuildReport(ctx, st, opt)
			if err != nil {
				return err
			}
			if output == "" {
				return report.Write(a.stdout, r, format)
			}
			f, err := os.Create(output)
			if err != nil {
				return err
			}
			err = report.Write(f, r, format)
			return errors.Join(err, f.Close())
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&format, "format", "text", "text, md, html or json")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the report to this file")
	cmd.Flags().BoolVar(&compare, "compare", false, "compare the two groups given as arguments")
	return cmd
}

// formatOf is the report format a file's extension names, text by default.
func formatOf(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md", ".markdown":
		return "md"
	case ".html", ".htm":
		return "html"
	case ".json":
		return "json"
	}
	return "text"
}
