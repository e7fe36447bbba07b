package sqlshared

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// LoadHeader reads a trace without its steps, as a backend's LoadHeader
// does: its row of traces, its findings (through findings, each backend's
// own) and its outcomes, and how many steps it has. param is the dialect's
// placeholder for the queries' one parameter, the trace's id.
func LoadHeader(ctx context.Context, db Querier, id, param string, findings func(context.Context, string) ([]trace.Finding, error)) (*trace.Trace, int, error) {
	t := &trace.Trace{ID: id}
	var started, ended, usage, meta, diagSource string
	var diag sql.NullString
	var steps int
	err := db.QueryRowContext(ctx, `SELECT format, source, system, model, task, scenario, trial, started, ended, usage, meta,
		diagnosis_source, diagnosis, step_count, detected_with FROM traces WHERE id = `+param, id).
		Scan(&t.Format, &t.Source, &t.System, &t.Model, &t.Task, &t.Scenario, &t.Trial, &started, &ended, &usage, &meta, &diagSource, &diag, &steps, &t.DetectedWith)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, 0, fmt.Errorf("trace %q: %w", id, store.ErrNotFound)
	case err != nil:
		return nil, 0, fmt.Errorf("trace %s: %w", id, err)
	}
	t.Started, t.Ended = ParseTime(started), ParseTime(ended)
	if err := json.Unmarshal([]byte(usage), &t.Usage); err != nil {
		return nil, 0, fmt.Errorf("trace %s usage: %w", id, err)
	}
	if err := json.Unmarshal([]byte(meta), &t.Meta); err != nil {
		return nil, 0, fmt.Errorf("trace %s meta: %w", id, err)
	}
	if len(t.Meta) == 0 {
		t.Meta = nil
	}
	if diag.Valid {
		t.Diagnosis = &trace.Diagnosis{Source: diagSource, Body: diag.String}
	}
	if t.Findings, err = findings(ctx, id); err != nil {
		return nil, 0, err
	}
	err = Each(ctx, db, `SELECT trace_id, source, metric, score, success, detail FROM outcomes WHERE trace_id = `+param+` ORDER BY source`, []any{id},
		func(rows *sql.Rows) error {
			_, o, err := ScanOutcome(rows)
			t.Outcomes = append(t.Outcomes, o)
			return err
		})
	if err != nil {
		return nil, 0, fmt.Errorf("trace %s outcomes: %w", id, err)
	}
	return t, steps, nil
}
