package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// PickSteps calls fn with the steps p takes from each of the traces ids
// names that exist, in the order of ids, reading a batch of traces per
// query: first every step's kind and status, then the chosen steps.
func (s *Store) PickSteps(ctx context.Context, ids []string, p store.StepPick, fn func(store.PickedSteps) error) error {
	err := store.PickSteps(ctx, ids, p, s.stepHeads, s.pickedTexts, fn)
	if err != nil {
		return fmt.Errorf("reading steps: %w", err)
	}
	return nil
}

func (s *Store) stepHeads(ctx context.Context, ids []string, fn func(id string, st trace.Step)) error {
	return s.each(ctx, `SELECT trace_id, idx, kind, exit_code, is_error FROM steps WHERE trace_id = ANY($1) ORDER BY trace_id, idx`,
		args{ids}, func(rows *sql.Rows) error {
			var id, kind string
			var st trace.Step
			if err := rows.Scan(&id, &st.Index, &kind, &st.ExitCode, &st.IsError); err != nil {
				return err
			}
			st.Kind = trace.Kind(kind)
			fn(id, st)
			return nil
		})
}

func (s *Store) pickedTexts(ctx context.Context, want []store.StepRef, limit int, fn func(id string, st trace.Step)) error {
	ids, idx := make([]string, len(want)), make([]int32, len(want))
	for i, w := range want {
		ids[i], idx[i] = w.Trace, int32(w.Index)
	}
	text, argsCol := "s.text", "s.args"
	if limit > 0 {
		text, argsCol = fmt.Sprintf("left(s.text, %d)", limit), fmt.Sprintf("left(s.args, %d)", limit)
	}
	return s.each(ctx, `SELECT s.trace_id, s.idx, s.kind, s.tool, s.exit_code, s.is_error, `+text+`, `+argsCol+`
		FROM steps s JOIN unnest($1::text[], $2::int[]) AS w(trace_id, idx) ON s.trace_id = w.trace_id AND s.idx = w.idx
		ORDER BY s.trace_id, s.idx`, args{ids, idx}, func(rows *sql.Rows) error {
		var id, kind string
		var st trace.Step
		if err := rows.Scan(&id, &st.Index, &kind, &st.Tool, &st.ExitCode, &st.IsError, &st.Text, &st.Args); err != nil {
			return err
		}
		st.Kind = trace.Kind(kind)
		fn(id, st)
		return nil
	})
}
