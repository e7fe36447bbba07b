package main

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/internal/compare"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

func (a *app) diffCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Compare two runs of the same task side by side, step by step",
		Long: `Compare two runs of the same task (two models, or two versions of an agent): what
each came to (model, outcome, the modes found in it, steps, tokens, time), then their
steps side by side, aligned by tool call. Two calls line up when they use the same tool
and, for a shell, the same program; '=' marks the same call (paths compared by their
last element, ids and timestamps ignored), '≈' the same program with other arguments,
'<' and '>' a call only A or only B made. Messages and reasoning go with the call they
lead to. A and B are trace ids or unique prefixes of them (see faultline ls).

--json prints {a, b, counts, rows, modes}; see docs/json.md.`,
		Example: `  faultline diff 019bc2a7 019bc313
  faultline diff 019bc2a7 019bc313 --json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.readStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			var traces [2]*trace.Trace
			for i, arg := range args {
				side := "AB"[i : i+1]
				id, err := st.Resolve(ctx, arg)
				if err != nil {
					return fmt.Errorf("diff %s: %w", side, err)
				}
				if traces[i], err = st.Load(ctx, id); err != nil {
					return fmt.Errorf("diff %s: reading trace %s: %w", side, id, err)
				}
			}
			if traces[0].ID == traces[1].ID {
				return fmt.Errorf("diff: A and B are the same trace, %s: name two runs", traces[0].ID)
			}
			c := compare.Compare(traces[0], traces[1])
			if asJSON {
				return writeJSON(a.stdout, c)
			}
			return writeDiff(a.stdout, c)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// The terminal layout fits 100 columns: the summary is a label and two
// columns, the rows a step number, a label and a mark on each side.
const (
	diffLabelWidth = 10
	diffSideWidth  = 43
	diffStepWidth  = 5
	diffCellWidth  = 42
)

// diffMarks are the row marks, by match.
var diffMarks = map[compare.Match]string{
	compare.MatchExact:     "=",
	compare.MatchSimilar:   "≈",
	compare.MatchDifferent: "≠",
	compare.MatchOnlyA:     "<",
	compare.MatchOnlyB:     ">",
}

// writeDiff prints a comparison for a terminal. Everything from the traces
// is made printable and cut to its column.
func writeDiff(w io.Writer, c *compare.Comparison) error {
	var b strings.Builder
	summary := []struct {
		label string
		value func(compare.Side) string
	}{
		{"", func(s compare.Side) string { return "" }},
		{"trace", func(s compare.Side) string { return s.ID }},
		{"model", func(s compare.Side) string { return orDash(s.Model) }},
		{"scenario", func(s compare.Side) string {
			if s.Trial != "" {
				return orDash(s.Scenario) + ", trial " + s.Trial
			}
			return orDash(s.Scenario)
		}},
		{"outcome", func(s compare.Side) string { return report.OutcomeText(s.Outcome) }},
		{"steps", func(s compare.Side) string {
			return fmt.Sprintf("%d, %s", s.Steps, text.Plural(s.ToolCalls, "tool call", "tool calls"))
		}},
		{"tokens", func(s compare.Side) string {
			if s.Tokens == 0 {
				return "-"
			}
			return fmt.Sprint(s.Tokens)
		}},
		{"took", func(s compare.Side) string {
			if s.Duration == 0 {
				return "-"
			}
			return s.Duration.Round(time.Second).String()
		}},
		{"modes", func(s compare.Side) string {
			var parts []string
			for _, sm := range s.Modes {
				parts = append(parts, sm.Source+": "+strings.Join(sm.Modes, " "))
			}
			if parts == nil {
				return "none found"
			}
			return strings.Join(parts, "; ")
		}},
	}
	for i, f := range summary {
		left, right := f.value(c.A), f.value(c.B)
		if i == 0 {
			left, right = "A", "B"
		}
		wrapPair(&b, f.label, left, right)
	}
	b.WriteString("\n" + modeLine(c.Modes) + "\n")
	fmt.Fprintf(&b, "Calls: %d the same, %d similar, %d only in A, %d only in B.\n", c.Counts.Exact, c.Counts.Similar, c.Counts.OnlyA, c.Counts.OnlyB)
	b.WriteString("Marks: = the same, ≈ similar, ≠ different, < only in A, > only in B; ✗ a call that failed.\n\n")
	fmt.Fprintf(&b, "%*s %-*s   %*s %s\n", diffStepWidth, "#", diffCellWidth, "A", diffStepWidth, "#", "B")
	for _, r := range c.Rows {
		ls, lt := diffCell(r.A)
		rs, rt := diffCell(r.B)
		line := fmt.Sprintf("%*s %s %s %*s %s", diffStepWidth, ls, pad(lt, diffCellWidth), diffMarks[r.Match], diffStepWidth, rs, rt)
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrapPair prints a summary line: a label and the two sides' values, each
// wrapped to its column (a word too long for it cut with …).
func wrapPair(b *strings.Builder, label, left, right string) {
	l, r := wrapCell(left, diffSideWidth), wrapCell(right, diffSideWidth)
	for i := 0; i < max(len(l), len(r)); i++ {
		var x, y string
		if i < len(l) {
			x = l[i]
		}
		if i < len(r) {
			y = r[i]
		}
		line := fmt.Sprintf("%-*s %s  %s", diffLabelWidth, label, pad(x, diffSideWidth), y)
		b.WriteString(strings.TrimRight(line, " ") + "\n")
		label = ""
	}
}

func wrapCell(s string, width int) []string {
	var lines []string
	for _, line := range strings.Split(report.Wrap(report.Printable(s), width, ""), "\n") {
		lines = append(lines, trace.Clip(line, width-1))
	}
	return lines
}

// diffCell is one side of a row: its step (the call, or the first of an
// opening or closing) and its label, cut to the column; blank for a gap.
func diffCell(c *compare.Cell) (step, cell string) {
	if c == nil {
		return "", ""
	}
	at := c.Steps[0]
	if c.Call != nil {
		at = *c.Call
	}
	label := report.Printable(c.Label)
	if c.Failed {
		label = "✗ " + label
	}
	if c.Call == nil && label == "" {
		label = text.Plural(len(c.Steps), "step", "steps")
	}
	return fmt.Sprint(at), trace.Clip(label, diffCellWidth-1)
}

// pad fills s with spaces to width runes.
func pad(s string, width int) string {
	return s + strings.Repeat(" ", max(0, width-utf8.RuneCountInString(s)))
}

// modeLine says which modes both runs show and which only one.
func modeLine(modes []compare.Mode) string {
	var both, onlyA, onlyB []string
	for _, m := range modes {
		switch {
		case m.A && m.B:
			both = append(both, m.Mode)
		case m.A:
			onlyA = append(onlyA, m.Mode)
		default:
			onlyB = append(onlyB, m.Mode)
		}
	}
	var parts []string
	for _, p := range []struct {
		where string
		modes []string
	}{{"in both", both}, {"only in A", onlyA}, {"only in B", onlyB}} {
		if p.modes != nil {
			parts = append(parts, p.where+" "+strings.Join(p.modes, " "))
		}
	}
	if parts == nil {
		return "Modes: none found on either run."
	}
	return report.Wrap("Modes: "+strings.Join(parts, "; ")+".", 99, "")
}
