// Package export writes stored traces and their findings for other tools:
// OTLP, where each finding is a gen_ai.evaluation.result event tied to the
// trace and span it is about (for an OpenTelemetry collector, Phoenix or
// Langfuse), and CSV or JSON Lines tables for pandas, DuckDB or a
// spreadsheet. Traces are read one at a time, so memory does not grow with
// the cohort.
package export

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// Formats are the export formats, for flags and errors.
var Formats = []string{"otlp", "csv", "jsonl"}

// Signals are the OTLP signals findings can be written as.
var Signals = []string{"logs", "spans"}

// Source is what export reads: the store.
type Source interface {
	List(ctx context.Context, f store.Filter) ([]store.Summary, error)
	Load(ctx context.Context, id string) (*trace.Trace, error)
}

// Options say what to export and how.
type Options struct {
	Filter store.Filter
	// Sources keeps the findings of these annotation sources (a name, or a
	// prefix before ":"); all sources when empty.
	Sources []string
	// Findings makes CSV and JSON Lines one row per finding instead of one
	// per trace and mode.
	Findings bool
	// Signal is the OTLP signal: "logs" (events as the semantic conventions
	// define them) or "spans" (for backends that take traces only).
	Signal string
}

// Summary counts what was written.
type Summary struct {
	Traces int `json:"traces"`
	Rows   int `json:"rows"` // table rows, or OTLP events
}

// Write exports the traces opts selects to w in format.
func Write(ctx context.Context, src Source, w io.Writer, format string, opts Options) (Summary, error) {
	var out writer
	switch format {
	case "csv":
		out = newTable(w, true, opts.Findings)
	case "jsonl":
		out = newTable(w, false, opts.Findings)
	case "otlp":
		o, err := newOTLP(w, opts.Signal)
		if err != nil {
			return Summary{}, err
		}
		out = o
	default:
		return Summary{}, fmt.Errorf("unknown export format %q (want %s)", format, strings.Join(Formats, ", "))
	}
	traces, err := src.List(ctx, opts.Filter)
	if err != nil {
		return Summary{}, err
	}
	var sum Summary
	for _, s := range traces {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		t, err := src.Load(ctx, s.ID)
		if err != nil {
			return sum, err
		}
		t.Findings = selected(t.Findings, opts.Sources)
		rows, err := out.trace(t)
		if err != nil {
			return sum, fmt.Errorf("trace %s: %w", t.ID, err)
		}
		sum.Traces++
		sum.Rows += rows
	}
	return sum, out.close()
}

// writer is one export format.
type writer interface {
	trace(t *trace.Trace) (rows int, err error)
	close() error
}

func selected(findings []trace.Finding, sources []string) []trace.Finding {
	var out []trace.Finding
	for _, f := range findings {
		if store.MatchSource(f.Source, sources) {
			out = append(out, f)
		}
	}
	return out
}

// modes lists every code a trace × mode table has a row for: MAST's
// modes, then faultline's system failures.
func modes() []taxonomy.Mode {
	return append(append([]taxonomy.Mode{}, taxonomy.MAST.Modes...), taxonomy.System.Modes...)
}

// modeName names a finding's mode for people: its code and name, or the
// label as its source wrote it when it maps to no code.
func modeName(f trace.Finding) (code, name, category string) {
	if m, _, ok := taxonomy.Lookup(f.Mode); ok {
		return m.Code, m.Name, m.Category
	}
	return f.Mode, f.RawLabel, ""
}
