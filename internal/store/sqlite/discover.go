package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// PickSteps calls fn with the steps p takes from each of the traces ids
// names that exist, in the order of ids, reading a batch of traces per
// query: first every step's kind and status (the text and arguments,
// stored last in a row and on overflow pages when long, are not read),
// then the chosen steps by row id.
func (s *Store) PickSteps(ctx context.Context, ids []string, p store.StepPick, fn func(store.PickedSteps) error) error {
	// A step's row id is its trace's key and its index: the heads of a
	// batch give the keys of its traces, which the chosen steps are then
	// read by.
	keys := map[string]int64{}
	heads := func(ctx context.Context, ids []string, fn func(id string, st trace.Step)) error {
		clear(keys)
		return s.stepHeads(ctx, ids, keys, fn)
	}
	texts := func(ctx context.Context, want []store.StepRef, limit int, fn func(id string, st trace.Step)) error {
		return s.pickedTexts(ctx, want, keys, limit, fn)
	}
	err := store.PickSteps(ctx, ids, p, heads, texts, fn)
	if err != nil {
		return fmt.Errorf("reading steps: %w", err)
	}
	return nil
}

// stepHeads reads the steps of the traces ids without their text or
// arguments, and puts each trace's key in keys.
func (s *Store) stepHeads(ctx context.Context, ids []string, keys map[string]int64, fn func(id string, st trace.Step)) error {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return s.each(ctx, `SELECT k.trace_id, s.rowid, s.kind, s.exit_code, s.is_error
		FROM trace_keys k JOIN step_rows s ON s.rowid BETWEEN k.key << `+fmt.Sprint(stepBits)+` AND (k.key << `+fmt.Sprint(stepBits)+`) | `+fmt.Sprint(maxSteps-1)+`
		WHERE k.trace_id IN (`+placeholders(len(ids))+`) ORDER BY k.trace_id, s.rowid`, func(rows *sql.Rows) error {
		var id, kind string
		var rowid int64
		var st trace.Step
		if err := rows.Scan(&id, &rowid, &kind, &st.ExitCode, &st.IsError); err != nil {
			return err
		}
		keys[id] = rowid >> stepBits
		st.Index, st.Kind = int(rowid&(maxSteps-1)), trace.Kind(kind)
		fn(id, st)
		return nil
	}, args...)
}

// pickedTexts reads the steps want names, of traces whose keys are in keys.
func (s *Store) pickedTexts(ctx context.Context, want []store.StepRef, keys map[string]int64, limit int, fn func(id string, st trace.Step)) error {
	owner := map[int64]string{}
	rowids := make([]string, 0, len(want))
	for _, w := range want {
		if key, ok := keys[w.Trace]; ok {
			rowid := key<<stepBits | int64(w.Index)
			owner[key] = w.Trace
			rowids = append(rowids, fmt.Sprint(rowid))
		}
	}
	text, argsCol := "text", "args"
	if limit > 0 {
		text, argsCol = fmt.Sprintf("substr(text, 1, %d)", limit), fmt.Sprintf("substr(args, 1, %d)", limit)
	}
	// The row ids are integers made here, written into the query rather
	// than bound, so that a batch is one statement whatever its size.
	return s.each(ctx, `SELECT rowid, kind, tool, exit_code, is_error, `+text+`, `+argsCol+`
		FROM step_rows WHERE rowid IN (`+strings.Join(rowids, ",")+`) ORDER BY rowid`, func(rows *sql.Rows) error {
		var rowid int64
		var kind string
		var st trace.Step
		if err := rows.Scan(&rowid, &kind, &st.Tool, &st.ExitCode, &st.IsError, &st.Text, &st.Args); err != nil {
			return err
		}
		st.Index, st.Kind = int(rowid&(maxSteps-1)), trace.Kind(kind)
		fn(owner[rowid>>stepBits], st)
		return nil
	})
}
