package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/trace"
)

// Human labels are findings of a source of their own (human:<name>), one
// per trace and mode, with the verdict present, absent or unsure: the
// labeller's note is the finding's explanation, the evidence its steps and
// quote. These read and write them in faultline's label format.

// ExportLabels returns the labels of one source (its findings with a mode),
// by trace and mode.
func (s *Store) ExportLabels(ctx context.Context, source string) ([]labels.ModeLabel, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT trace_id, mode, verdict, steps, quote, explanation FROM findings
		WHERE source = ? AND mode != '' ORDER BY trace_id, mode, id`, source)
	if err != nil {
		return nil, fmt.Errorf("reading labels of %s: %w", source, err)
	}
	defer rows.Close()
	out := []labels.ModeLabel{}
	for rows.Next() {
		var l labels.ModeLabel
		var verdict, steps string
		if err := rows.Scan(&l.Trace, &l.Mode, &verdict, &steps, &l.Quote, &l.Note); err != nil {
			return nil, err
		}
		l.Verdict = trace.Verdict(verdict)
		if err := json.Unmarshal([]byte(steps), &l.Steps); err != nil {
			return nil, fmt.Errorf("trace %s finding steps: %w", l.Trace, err)
		}
		if len(l.Steps) == 0 {
			l.Steps = nil
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// LabelledTraces counts the traces with a finding of source.
func (s *Store) LabelledTraces(ctx context.Context, source string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(DISTINCT trace_id) FROM findings WHERE source = ?`, source).Scan(&n)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("counting the traces of %s: %w", source, err)
	}
	return n, nil
}
