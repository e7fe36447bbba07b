package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/text"
)

// WriteCheck prints the outcome of `faultline check`: a verdict line, then
// every figure that rose, regressions first.
func WriteCheck(w io.Writer, res *analyze.CheckResult, baseline, current *analyze.Report, baselineName string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s by %s against %s (%s)\n", text.Plural(current.Traces, "trace", "traces"), current.By, Printable(baselineName), text.Plural(baseline.Traces, "trace", "traces"))
	fmt.Fprintf(&b, "limits: a mode's share of traces may rise by %s, modes per failed trace by %g\n", pointsOf(res.Limits.Prevalence), res.Limits.Density)
	if n := res.Regressions(); n > 0 {
		fmt.Fprintf(&b, "FAIL: %d of %d figures rose past their limit\n", n, res.Checked)
	} else {
		fmt.Fprintf(&b, "ok: %d figures within their limits\n", res.Checked)
	}
	if len(res.Rises) > 0 {
		t := Table{Header: []string{"group", "figure", "baseline", "now", "rise", "limit", ""}}
		for _, r := range res.Rises {
			row := []string{Printable(r.Group), r.Measure + " " + r.Name}
			if r.BaselineCount != nil {
				row = append(row, fraction(*r.BaselineCount), fraction(*r.CurrentCount), pointsOf(r.Current-r.Baseline), pointsOf(r.Limit))
			} else {
				row = append(row, fmt.Sprintf("%.2f", r.Baseline), fmt.Sprintf("%.2f", r.Current), fmt.Sprintf("+%.2f", r.Current-r.Baseline), fmt.Sprintf("+%g", r.Limit))
			}
			verdict := "within"
			if r.Regression {
				verdict = "REGRESSION"
			}
			t.Rows = append(t.Rows, append(row, verdict))
		}
		b.WriteString("\n")
		if err := t.Write(&b); err != nil {
			return err
		}
	}
	if len(res.Missing) > 0 {
		fmt.Fprintf(&b, "\nnot checked, in the baseline only: %s\n", Printable(strings.Join(res.Missing, ", ")))
	}
	if len(res.New) > 0 {
		fmt.Fprintf(&b, "\nnot checked, not in the baseline: %s\n", Printable(strings.Join(res.New, ", ")))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pointsOf(share float64) string { return fmt.Sprintf("+%.1f pts", 100*share) }
