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
		_, err := fmt.Fprintf(w, "\nNo failure modes found (sources: %s).\n", sourceList(s.Sources))
		return err
	}
	if _, err := fmt.Fprintf(w, "\nTraces with each mode (sources: %s)\n", sourceList(s.Sources)); err != nil {
		return err
	}
	byMode := Table{Header: []string{"mode"}, NumericRight: true}
	for _, m := range rows {
		byMode.Header = append(byMode.Header, m.Name)
	}
	for _, code := range modes {
		cells := []string{code + " " + modeName(code)}
		for _, m := range rows {
			cells = append(cells, countCell(m.Modes[code], m.Traces))
		}
		byMode.Rows = append(byMode.Rows, cells)
	}
	return byMode.Write(w)
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
