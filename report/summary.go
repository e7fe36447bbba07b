package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/faultline/faultline/analyze"
)

// WriteSummary prints the per-group overview: one table of traces and
// outcomes, one of modes (rows) by group (columns).
func WriteSummary(w io.Writer, s *analyze.Summary) error {
	rows := append(append([]analyze.Group{}, s.Groups...), s.Total)
	overview := Table{Header: []string{s.By, "traces", "succeeded", "failed", "unscored", "with modes"}, NumericRight: true}
	for _, m := range rows {
		overview.Rows = append(overview.Rows, []string{m.Name, fmt.Sprint(m.Traces), fmt.Sprint(m.Succeeded), fmt.Sprint(m.Failed), fmt.Sprint(m.Unscored), fmt.Sprint(m.WithModes)})
	}
	if err := overview.Write(w); err != nil {
		return err
	}
	modes := s.ModesSeen()
	if len(modes) == 0 {
		if _, err := fmt.Fprintf(w, "\nNo MAST failure modes found (sources: %s).\n", sourceList(s.Sources)); err != nil {
			return err
		}
	} else {
		if _, err := fmt.Fprintf(w, "\nTraces with each MAST mode (sources: %s)\n", sourceList(s.Sources)); err != nil {
			return err
		}
		if err := modeTable(rows, modes, func(g analyze.Group) map[string]int { return g.Modes }).Write(w); err != nil {
			return err
		}
	}
	if system := s.SystemSeen(); len(system) > 0 {
		if _, err := fmt.Fprintln(w, "\nHarness and infrastructure failures (not MAST modes, not counted above)"); err != nil {
			return err
		}
		return modeTable(rows, system, func(g analyze.Group) map[string]int { return g.System }).Write(w)
	}
	return nil
}

// modeTable lays out codes (rows) by group (columns).
func modeTable(rows []analyze.Group, codes []string, counts func(analyze.Group) map[string]int) *Table {
	t := &Table{Header: []string{"mode"}, NumericRight: true}
	for _, g := range rows {
		t.Header = append(t.Header, g.Name)
	}
	for _, code := range codes {
		cells := []string{code + " " + modeName(code)}
		for _, g := range rows {
			cells = append(cells, countCell(counts(g)[code], g.Traces))
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}

// countCell shows "n/N" so small groups are read as small.
func countCell(n, of int) string {
	if n == 0 {
		return "·"
	}
	return fmt.Sprintf("%d/%d", n, of)
}

func sourceList(sources []string) string {
	if len(sources) == 0 {
		return "none"
	}
	return strings.Join(sources, ", ")
}
