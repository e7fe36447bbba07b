package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/store/sqlshared"
	"github.com/faultline/faultline/trace"
)

// List returns the traces matching f, ordered by model, then id.
func (s *Store) List(ctx context.Context, f store.Filter) ([]store.Summary, error) {
	where, args, err := s.filterWhere(ctx, &f)
	if err != nil {
		return nil, err
	}
	q := `SELECT t.id, t.file, t.format, t.system, t.model, t.task, t.scenario, t.trial, t.step_count, t.source FROM traces t` +
		whereClause(where) + " ORDER BY t.model, t.id"
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing traces: %w", err)
	}
	defer rows.Close()
	var out []store.Summary
	index := map[string]int{}
	selected := selectionSet(f.Select)
	for rows.Next() {
		var sm store.Summary
		var file string
		if err := rows.Scan(&sm.ID, &file, &sm.Format, &sm.System, &sm.Model, &sm.Task, &sm.Scenario, &sm.Trial, &sm.Steps, &sm.Source); err != nil {
			return nil, err
		}
		if selected != nil && !selected[sm.ID] && !selected["file\x00"+file] {
			continue
		}
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
		index[sm.ID] = len(out)
		out = append(out, sm)
	}
	// Closed before the outcomes are read: a limit leaves rows unread, and
	// a read-only store reads through one connection.
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	if err := s.attachOutcomes(ctx, out, index); err != nil {
		return nil, err
	}
	return out, nil
}

// selectionSet turns a selection into a lookup of ids and "file\x00"-prefixed file
// keys; nil means no selection.
func selectionSet(sel *store.Selection) map[string]bool {
	if sel == nil {
		return nil
	}
	m := make(map[string]bool, len(sel.IDs)+len(sel.Files))
	for _, id := range sel.IDs {
		m[id] = true
	}
	for _, f := range sel.Files {
		m["file\x00"+f] = true
	}
	return m
}

func (s *Store) attachOutcomes(ctx context.Context, out []store.Summary, index map[string]int) error {
	if len(out) == 0 {
		return nil
	}
	// A page of traces reads its own outcomes; a long list the whole table,
	// in one pass.
	var ids []string
	if len(out) <= 500 {
		ids = make([]string, len(out))
		for i, sm := range out {
			ids[i] = sm.ID
		}
	}
	return sqlshared.AttachOutcomes(out, index, func(scan func(*sql.Rows) error) error {
		return s.eachSelected(ctx, ids, "trace_id", `SELECT trace_id, source, metric, score, success, detail FROM outcomes WHERE 1 %s ORDER BY trace_id, source`, scan)
	})
}

// Resolve turns a trace id or a unique prefix of one into the full id.
func (s *Store) Resolve(ctx context.Context, idOrPrefix string) (string, error) {
	ids, err := s.column(ctx, `SELECT id FROM traces WHERE id = ? OR id LIKE ? ESCAPE '\' ORDER BY id LIMIT 6`, idOrPrefix, likeEscape(idOrPrefix)+"%")
	if err != nil {
		return "", err
	}
	return store.ResolveAmong(idOrPrefix, ids)
}

// Load reads a whole trace: steps, every finding and every outcome.
func (s *Store) Load(ctx context.Context, id string) (*trace.Trace, error) {
	return store.LoadWhole(ctx, s, id)
}

// LoadHeader reads a trace without its steps (findings and outcomes
// included) and says how many steps it has, for views that page through
// long traces.
func (s *Store) LoadHeader(ctx context.Context, id string) (*trace.Trace, int, error) {
	return sqlshared.LoadHeader(ctx, s.db, id, "?", s.Findings)
}

// StepRange reads the steps of a trace with indices from..to-1.
func (s *Store) StepRange(ctx context.Context, id string, from, to int) ([]trace.Step, error) {
	from, to = max(from, 0), min(to, maxSteps)
	if from >= to {
		return nil, nil
	}
	return s.steps(ctx, id, "BETWEEN ?1 + ? AND ?1 + ?", []any{from, to - 1})
}

// StepsAt reads the steps of a trace at the given indices, in order;
// indices the trace does not have are left out.
func (s *Store) StepsAt(ctx context.Context, id string, idx []int) ([]trace.Step, error) {
	var args []any
	for _, n := range idx {
		if n >= 0 && n < maxSteps {
			args = append(args, n)
		}
	}
	if len(args) == 0 {
		return nil, nil
	}
	return s.steps(ctx, id, "IN (?1 + "+strings.Repeat("?, ?1 + ", len(args)-1)+"?)", args)
}

// steps reads the steps of a trace whose row ids satisfy rowids (a
// condition on the row id, in which ?1 is the first row id of the trace,
// with its args after it; "" for every step), in order. A trace's steps
// are the range of row ids of its key (see migration 0007).
func (s *Store) steps(ctx context.Context, id, rowids string, args []any) ([]trace.Step, error) {
	var key int64
	err := s.db.QueryRowContext(ctx, `SELECT key FROM trace_keys WHERE trace_id = ?`, id).Scan(&key)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("trace %s steps: %w", id, err)
	}
	first := key << stepBits
	if rowids == "" {
		rowids, args = "BETWEEN ?1 AND ?", []any{first | (maxSteps - 1)}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT rowid, kind, role, agent, text, tool, args, call_id, pair, exit_code, is_error, time, tokens, type, span_id
		FROM step_rows WHERE rowid `+rowids+` ORDER BY rowid`, append([]any{first}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("trace %s steps: %w", id, err)
	}
	defer rows.Close()
	var out []trace.Step
	for rows.Next() {
		var st trace.Step
		var rowid int64
		var kind, ts string
		var pair, exit sql.NullInt64
		if err := rows.Scan(&rowid, &kind, &st.Role, &st.Agent, &st.Text, &st.Tool, &st.Args, &st.CallID, &pair, &exit, &st.IsError, &ts, &st.Tokens, &st.Type, &st.SpanID); err != nil {
			return nil, fmt.Errorf("trace %s steps: %w", id, err)
		}
		st.Index = int(rowid - first)
		st.Kind = trace.Kind(kind)
		st.Time = parseTimeText(ts)
		if pair.Valid {
			p := int(pair.Int64)
			st.Pair = &p
		}
		if exit.Valid {
			e := int(exit.Int64)
			st.ExitCode = &e
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// Findings returns every finding on a trace, ordered by first cited step,
// then as stored.
func (s *Store) Findings(ctx context.Context, traceID string) ([]trace.Finding, error) {
	var out []trace.Finding
	err := s.each(ctx, `SELECT `+findingColumns+` FROM findings WHERE trace_id = ? ORDER BY id`, func(rows *sql.Rows) error {
		var f trace.Finding
		err := scanFinding(rows, &f)
		out = append(out, f)
		return err
	}, traceID)
	if err != nil {
		return nil, fmt.Errorf("trace %s findings: %w", traceID, err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].FirstStep() < out[j].FirstStep() })
	return out, nil
}

// findingColumns are a finding's columns, as scanFinding reads them.
const findingColumns = `source, mode, verdict, detector, steps, quote, confidence, explanation, taxonomy, raw_label`

// scanFinding reads a row of lead's columns, then findingColumns, into f.
func scanFinding(rows *sql.Rows, f *trace.Finding, lead ...any) error {
	var verdict, steps string
	if err := rows.Scan(append(lead, &f.Source, &f.Mode, &verdict, &f.Detector, &steps, &f.Quote, &f.Confidence, &f.Explanation, &f.Taxonomy, &f.RawLabel)...); err != nil {
		return err
	}
	f.Verdict = trace.Verdict(verdict)
	if err := json.Unmarshal([]byte(steps), &f.Steps); err != nil {
		return fmt.Errorf("finding steps: %w", err)
	}
	if len(f.Steps) == 0 {
		f.Steps = nil
	}
	return nil
}

// DetectedWith returns, for the given traces, the detector set their stored
// detector findings came from ("" when detectors never ran).
func (s *Store) DetectedWith(ctx context.Context, ids []string) (map[string]string, error) {
	out := map[string]string{}
	err := s.queryIDs(ctx, ids, `SELECT id, detected_with FROM traces WHERE id IN (%s)`, func(rows *sql.Rows) error {
		var id, with string
		if err := rows.Scan(&id, &with); err != nil {
			return err
		}
		out[id] = with
		return nil
	})
	return out, err
}

// queryIDs runs a query whose %s takes a list of trace ids, in chunks that
// stay under SQLite's limit on bound parameters, calling scan for each row;
// the query's other parameters, after the ids, take extra.
func (s *Store) queryIDs(ctx context.Context, ids []string, query string, scan func(*sql.Rows) error, extra ...any) error {
	const chunkSize = 500
	for start := 0; start < len(ids); start += chunkSize {
		chunk := ids[start:min(len(ids), start+chunkSize)]
		args := make([]any, len(chunk), len(chunk)+len(extra))
		for i, id := range chunk {
			args[i] = id
		}
		args = append(args, extra...)
		if err := s.each(ctx, fmt.Sprintf(query, placeholders(len(chunk))), scan, args...); err != nil {
			return err
		}
	}
	return nil
}

// Sources lists the annotation sources present on the given traces, sorted.
func (s *Store) Sources(ctx context.Context, ids []string) ([]string, error) {
	seen := map[string]bool{}
	err := s.queryIDs(ctx, ids, `SELECT DISTINCT source FROM findings WHERE trace_id IN (%s)`, func(rows *sql.Rows) error {
		var src string
		if err := rows.Scan(&src); err != nil {
			return err
		}
		seen[src] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading sources: %w", err)
	}
	out := make([]string, 0, len(seen))
	for src := range seen {
		out = append(out, src)
	}
	sort.Strings(out)
	return out, nil
}
