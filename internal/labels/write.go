package labels

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/faultline/faultline/trace"
)

// WriteFormats are the forms Write writes: CSV with a header, or JSON Lines.
var WriteFormats = []string{"csv", "jsonl"}

// Write writes labels in faultline's label format, every verdict stated
// (absences too), so that reading the file back gives the same labels.
func Write(w io.Writer, format string, ls []ModeLabel) error {
	switch format {
	case "csv":
		return writeCSV(w, ls)
	case "jsonl":
		return writeJSONL(w, ls)
	}
	return fmt.Errorf("unknown label format %q: use one of %s", format, strings.Join(WriteFormats, ", "))
}

// jsonLabel is one record of the JSON form; Present is null when unsure.
type jsonLabel struct {
	Trace   string `json:"trace"`
	Mode    string `json:"mode"`
	Present *bool  `json:"present"`
	Steps   []int  `json:"steps,omitempty"`
	Quote   string `json:"quote,omitempty"`
	Note    string `json:"note,omitempty"`
}

func writeJSONL(w io.Writer, ls []ModeLabel) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, l := range ls {
		rec := jsonLabel{Trace: l.Trace, Mode: l.Mode, Steps: l.Steps, Quote: l.Quote, Note: l.Note}
		if l.Verdict != trace.Unsure {
			present := l.Verdict == trace.Present
			rec.Present = &present
		}
		if err := enc.Encode(rec); err != nil {
			return err
		}
	}
	return nil
}

func writeCSV(w io.Writer, ls []ModeLabel) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(fields); err != nil {
		return err
	}
	for _, l := range ls {
		present := map[trace.Verdict]string{trace.Present: "true", trace.Absent: "false", trace.Unsure: "unsure"}[l.Verdict]
		steps := make([]string, len(l.Steps))
		for i, s := range l.Steps {
			steps[i] = strconv.Itoa(s)
		}
		if err := cw.Write([]string{l.Trace, l.Mode, present, strings.Join(steps, ";"), l.Quote, l.Note}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
