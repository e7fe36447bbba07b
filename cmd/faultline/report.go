package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/store"
)

// cohortFlags choose what a cohort report groups by and the annotation
// sources that count; analyze and report share them.
type cohortFlags struct {
	by     string
	filter store.Filter // report takes every filter, analyze --source only
}

func (f *cohortFlags) register(cmd *cobra.Command, filters ...string) {
	cmd.Flags().StringVar(&f.by, "by", "model", "group by "+strings.Join(analyze.Groupings, ", ")+" (models by their canonical names)")
	registerFilters(cmd, &f.filter, filters...)
}

// options are the report's options over the traces ids names (nil: every
// stored trace), narrowed by the filters: a report on some sources covers
// the traces they annotated.
func (a *app) cohortOptions(ctx context.Context, st database, f *cohortFlags, ids []string) (analyze.ReportOptions, error) {
	aliases, err := a.modelAliases()
	if err != nil {
		return analyze.ReportOptions{}, err
	}
	set, err := a.ruleSet()
	if err != nil {
		return analyze.ReportOptions{}, err
	}
	opt := analyze.ReportOptions{By: f.by, Sources: f.filter.Sources, IDs: ids, Aliases: aliases, CodeNames: set.CodeNames()}
	if !filtered(f.filter) {
		return opt, nil
	}
	filter := f.filter
	filter.Aliases = aliases
	if ids != nil {
		filter.Select = &store.Selection{IDs: ids}
	}
	traces, err := st.List(ctx, filter)
	if err != nil {
		return opt, err
	}
	if len(traces) == 0 {
		// A report of no trace says nothing; why there is none does.
		why, err := noMatch(ctx, st, filter)
		if err != nil {
			return opt, err
		}
		return opt, errors.New(why)
	}
	opt.IDs = summaryIDs(traces)
	return opt, nil
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
(--source selects: a name, or a prefix before ":"; the report then covers the
traces they annotated). The outcome is each trace's primary outcome. Intervals are
95% (Wilson for shares, Student t for means).

Models are grouped by their canonical names: provider and router prefixes are
stripped (openai/gpt-oss-120b and watsonx/openai/gpt-oss-120b are gpt-oss-120b),
and the models section of faultline.yaml names others; the report lists the names
each group merged. The filters are those of ls (--model, --system, --scenario,
--trace-format, --outcome, --mode, --source, --search, --path), with the same
meaning: the report covers the traces they keep.

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
  faultline report --compare gpt-oss-120b gemini-3-flash-preview
  faultline report --system itbench-zero --mode FM-3.2 --format md`,
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
			if os.Getenv("GOGC") == "" {
				debug.SetGCPercent(reportGCPercent)
			}
			ctx := cmd.Context()
			st, err := a.readStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			opt, err := a.cohortOptions(ctx, st, &cf, nil)
			if err != nil {
				return err
			}
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
	cf.register(cmd, filterNames(filterLimit)...)
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
