package export

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/faultline/faultline/trace"
)

// modeRow is one trace and one mode: whether any selected source found the
// mode present. Every trace has a row for every MAST mode and system
// failure, so the mean of present is the mode's prevalence.
type modeRow struct {
	traceFields
	Mode           string   `json:"mode"`
	ModeName       string   `json:"mode_name"`
	Category       string   `json:"category"`
	Present        bool     `json:"present"`
	PresentSources []string `json:"present_sources"`
	AbsentSources  []string `json:"absent_sources"`
	Findings       int      `json:"findings"`
	FirstStep      *int     `json:"first_step"`
}

// findingRow is one finding.
type findingRow struct {
	traceFields
	Mode        string   `json:"mode"`
	ModeName    string   `json:"mode_name"`
	Category    string   `json:"category"`
	Source      string   `json:"source"`
	Verdict     string   `json:"verdict"`
	Detector    string   `json:"detector"`
	Steps       []int    `json:"steps"`
	SpanID      string   `json:"span_id"`
	Quote       string   `json:"quote"`
	Confidence  *float64 `json:"confidence"`
	Explanation string   `json:"explanation"`
	Taxonomy    string   `json:"taxonomy"`
	RawLabel    string   `json:"raw_label"`
}

// traceFields opens every row: the trace and its outcome.
type traceFields struct {
	TraceID       string   `json:"trace_id"`
	OTelTraceID   string   `json:"otel_trace_id"`
	Format        string   `json:"format"`
	System        string   `json:"system"`
	Model         string   `json:"model"`
	Scenario      string   `json:"scenario"`
	Trial         string   `json:"trial"`
	Started       string   `json:"started"`
	Steps         int      `json:"steps"`
	OutcomeSource string   `json:"outcome_source"`
	Metric        string   `json:"metric"`
	Score         *float64 `json:"score"`
	Success       *bool    `json:"success"`
}

func newTraceFields(t *trace.Trace) traceFields {
	tf := traceFields{TraceID: t.ID, OTelTraceID: t.Meta["otel.trace_id"], Format: t.Format, System: t.System, Model: t.Model,
		Scenario: t.Scenario, Trial: t.Trial, Steps: len(t.Steps)}
	if !t.Started.IsZero() {
		tf.Started = t.Started.UTC().Format(time.RFC3339Nano)
	}
	if o := trace.PrimaryOutcome(t.Outcomes); o != nil {
		tf.OutcomeSource, tf.Metric, tf.Score, tf.Success = o.Source, o.Metric, o.Score, o.Success
	}
	return tf
}

// table writes rows as CSV (a header, then lists joined by ";" and null as
// an empty cell) or as JSON Lines (one object a line, the same keys).
type table struct {
	csv      *csv.Writer
	json     *json.Encoder
	findings bool
	header   bool
}

func newTable(w io.Writer, asCSV, findings bool) *table {
	t := &table{findings: findings}
	if asCSV {
		t.csv = csv.NewWriter(w)
	} else {
		t.json = json.NewEncoder(w)
		t.json.SetEscapeHTML(false)
	}
	return t
}

func (tb *table) trace(t *trace.Trace) (int, error) {
	var rows []any
	tf := newTraceFields(t)
	if tb.findings {
		for _, f := range t.Findings {
			code, name, category := modeName(f)
			r := findingRow{traceFields: tf, Mode: code, ModeName: name, Category: category, Source: f.Source, Verdict: string(f.Verdict),
				Detector: f.Detector, Steps: append([]int{}, f.Steps...), Quote: f.Quote, Explanation: f.Explanation, Taxonomy: f.Taxonomy, RawLabel: f.RawLabel}
			if f.Confidence > 0 {
				r.Confidence = &f.Confidence
			}
			if len(f.Steps) > 0 {
				if s := t.Step(f.Steps[0]); s != nil {
					r.SpanID = s.SpanID
				}
			}
			rows = append(rows, r)
		}
	} else {
		for _, m := range modes() {
			r := modeRow{traceFields: tf, Mode: m.Code, ModeName: m.Name, Category: m.Category, PresentSources: []string{}, AbsentSources: []string{}}
			for _, f := range t.Findings {
				if f.Mode != m.Code {
					continue
				}
				switch f.Verdict {
				case trace.Present:
					r.Present = true
					r.Findings++
					r.PresentSources = appendOnce(r.PresentSources, f.Source)
					if len(f.Steps) > 0 && (r.FirstStep == nil || f.Steps[0] < *r.FirstStep) {
						first := f.Steps[0]
						r.FirstStep = &first
					}
				case trace.Absent:
					r.AbsentSources = appendOnce(r.AbsentSources, f.Source)
				}
			}
			rows = append(rows, r)
		}
	}
	for _, r := range rows {
		if err := tb.write(r); err != nil {
			return 0, err
		}
	}
	return len(rows), nil
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func (tb *table) write(row any) error {
	if tb.json != nil {
		return tb.json.Encode(row)
	}
	if !tb.header {
		tb.header = true
		if err := tb.csv.Write(csvCells(reflect.ValueOf(row), true)); err != nil {
			return err
		}
	}
	return tb.csv.Write(csvCells(reflect.ValueOf(row), false))
}

// csvCells flattens a row struct, embedded structs first, into its column
// names (the JSON keys) or its cells.
func csvCells(v reflect.Value, names bool) []string {
	var out []string
	for i := 0; i < v.NumField(); i++ {
		f, field := v.Type().Field(i), v.Field(i)
		if f.Anonymous {
			out = append(out, csvCells(field, names)...)
			continue
		}
		if names {
			out = append(out, f.Tag.Get("json"))
		} else {
			out = append(out, csvCell(field))
		}
	}
	return out
}

func csvCell(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return ""
		}
		return csvCell(v.Elem())
	case reflect.Slice:
		cells := make([]string, v.Len())
		for i := range cells {
			cells[i] = csvCell(v.Index(i))
		}
		return strings.Join(cells, ";")
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	}
	return fmt.Sprint(v.Interface())
}

func (tb *table) close() error {
	if tb.csv != nil {
		tb.csv.Flush()
		return tb.csv.Error()
	}
	return nil
}
