package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/store"
)

// errRegression ends a check whose figures rose past their limits. It
// exits 1, as diff does when files differ: 0 passed, 1 failed the check,
// 2 could not check.
var errRegression = fmt.Errorf("figures rose past their limits: %w", errDataProblems)

func (a *app) checkCommand() *cobra.Command {
	var baselinePath, maxIncrease string
	var maxDensity float64
	var sf scoreFlags
	var inf ingestFlags
	cmd := &cobra.Command{
		Use:   "check --baseline FILE [PATH...]",
		Short: "Fail when failure modes got more common than in a saved report (a CI gate)",
		Long: `Compare the cohort report of the traces under PATH (ingested, detected and scored as
faultline analyze does; without PATH, the whole database) with a saved JSON report
(faultline report -o baseline.json, or faultline analyze --json), made with the same
grouping and the same --source selection, which check takes from the baseline.

In every group both reports have, and in the whole cohort, check compares each MAST
mode's share of traces and the failure density (distinct MAST modes per failed
trace). It fails when a share rises by more than --max-increase (a share such as
0.05, or 5%: five percentage points) or the density by more than
--max-density-increase modes. It prints every figure that rose, regressions first.

Exit status: 0 within the limits, 1 a figure rose past its limit (or some input could
not be read), 2 the check could not be made (no baseline, another grouping, bad flags).`,
		Example: `  faultline report -o baseline.json                 # on the main branch's runs
  faultline check --baseline baseline.json runs/     # in CI, on the new runs
  faultline check --baseline baseline.json --max-increase 10% --max-density-increase 0.5 runs/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			limit, err := parseShare(maxIncrease)
			if err != nil {
				return fmt.Errorf("--max-increase: %w", err)
			}
			if maxDensity < 0 {
				return fmt.Errorf("--max-density-increase must not be negative")
			}
			f, err := os.Open(baselinePath)
			if err != nil {
				return fmt.Errorf("baseline: %w", err)
			}
			baseline, err := analyze.ReadReport(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("baseline %s: %w", baselinePath, err)
			}
			ctx := cmd.Context()
			st, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			in, err := a.prepareCohort(cmd, st, args, &sf, inf, false)
			if err != nil {
				return err
			}
			opt, err := a.cohortOptions(ctx, st, &cohortFlags{by: baseline.By, filter: store.Filter{Sources: baseline.SourceSelection}}, in.ids)
			if err != nil {
				return err
			}
			current, err := analyze.BuildReport(ctx, st, opt)
			if err != nil {
				return err
			}
			res, err := analyze.Check(baseline, current, analyze.Limits{Prevalence: limit, Density: maxDensity})
			if err != nil {
				return fmt.Errorf("baseline %s: %w", baselinePath, err)
			}
			if err := report.WriteCheck(a.stdout, res, baseline, current, baselinePath); err != nil {
				return err
			}
			if res.Regressions() > 0 || (in.ingest != nil && in.ingest.Errors > 0) {
				return errRegression
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&baselinePath, "baseline", "", "the saved JSON report to compare with (required)")
	cmd.Flags().StringVar(&maxIncrease, "max-increase", "0.05", "largest allowed rise of a mode's share of traces: 0.05 or 5% (five points)")
	cmd.Flags().Float64Var(&maxDensity, "max-density-increase", 0.25, "largest allowed rise of the distinct MAST modes per failed trace")
	cmd.MarkFlagRequired("baseline")
	sf.register(cmd)
	inf.register(cmd)
	return cmd
}

// parseShare reads a share as a fraction (0.05) or a percentage (5%).
func parseShare(s string) (float64, error) {
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a share (0.05) or a percentage (5%%)", s)
	}
	if pct {
		v /= 100
	}
	if v < 0 || v > 1 {
		return 0, fmt.Errorf("%q is not between 0 and 1 (or 0%% and 100%%)", s)
	}
	return v, nil
}
