package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/faultline/faultline/internal/labels"
)

// Human labels are findings of a source of their own (human:<name>); these
// read them in faultline's label format.

// ExportLabels returns the labels of one source (its findings with a mode),
// by trace and mode.
func (s *Store) ExportLabels(ctx context.Context, source string) ([]labels.ModeLabel, error) {
	out := []labels.ModeLabel{}
	err := s.each(ctx, `SELECT trace_id, mode, verdict, steps, quote, explanation FROM findings
		WHERE source = $1 AND mode <> '' ORDER BY trace_id, mode, id`, args{source}, func(rows *sql.Rows) error {
		var l labels.ModeLabel
		var steps string
		if err := rows.Scan(&l.Trace, &l.Mode, &l.Verdict, &steps, &l.Quote, &l.Note); err != nil {
			return err
		}
		var err error
		l.Steps, err = decodeSteps(steps)
		out = append(out, l)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading labels of %s: %w", source, err)
	}
	return out, nil
}

// LabelledTraces counts the traces with a finding of source.
func (s *Store) LabelledTraces(ctx context.Context, source string) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(DISTINCT trace_id) FROM findings WHERE source = $1`, source).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting the traces of %s: %w", source, err)
	}
	return n, nil
}
