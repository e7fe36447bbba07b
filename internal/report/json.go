package report

import (
	"encoding/json"
	"io"

	"github.com/faultline/faultline/internal/analyze"
)

// WriteJSON writes a cohort report in its versioned JSON form (see
// analyze.ReportSchema), which `faultline check` reads back as a baseline.
func WriteJSON(w io.Writer, r *analyze.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
