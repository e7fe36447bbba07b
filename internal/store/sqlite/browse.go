package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// sortColumns are the columns of SortOrders, the id last in each.
var sortColumns = map[string]string{"id": "", "model": "t.model", "started": "t.started", "steps": "t.step_count"}

// Browse returns one page of the traces q selects.
func (s *Store) Browse(ctx context.Context, q store.TraceQuery) (*store.Page, error) {
	order, limit, err := q.Paging()
	if err != nil {
		return nil, err
	}
	col := sortColumns[order]
	where, args, err := s.queryWhere(ctx, &q)
	if err != nil {
		return nil, err
	}
	// Walking backwards (to the previous page) reads in the reverse order,
	// then turns the page around.
	backwards := q.Before != ""
	desc := q.Desc != backwards
	keys := []string{"t.id"}
	if col != "" {
		keys = []string{col, "t.id"}
	}
	if cursor := cmp.Or(q.After, q.Before); cursor != "" {
		values, err := store.DecodeCursor(cursor, order)
		if err != nil {
			return nil, err
		}
		op := ">"
		if desc {
			op = "<"
		}
		where = append(where, fmt.Sprintf("(%s) %s (%s)", strings.Join(keys, ", "), op, placeholders(len(keys))))
		args = append(args, values...)
	}
	sorted := make([]string, len(keys))
	for i, k := range keys {
		sorted[i] = k
		if desc {
			sorted[i] += " DESC"
		}
	}
	query := `SELECT t.id, t.format, t.system, t.model, t.task, t.scenario, t.trial, t.step_count, t.source, t.started FROM traces t` +
		whereClause(where) + " ORDER BY " + strings.Join(sorted, ", ") + " LIMIT ?"
	rows, err := s.db.QueryContext(ctx, query, append(args, limit+1)...)
	if err != nil {
		return nil, fmt.Errorf("listing traces: %w", err)
	}
	defer rows.Close()
	type row struct {
		sm      store.Summary
		started string // as stored, for the cursor
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.sm.ID, &r.sm.Format, &r.sm.System, &r.sm.Model, &r.sm.Task, &r.sm.Scenario, &r.sm.Trial, &r.sm.Steps, &r.sm.Source, &r.started); err != nil {
			return nil, err
		}
		r.sm.Started = parseTimeText(r.started)
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	more := len(got) > limit
	got = got[:min(len(got), limit)]
	if backwards {
		slices.Reverse(got)
	}
	p := &store.Page{Traces: make([]store.Summary, len(got))}
	index := map[string]int{}
	for i, r := range got {
		p.Traces[i] = r.sm
		index[r.sm.ID] = i
	}
	if len(got) > 0 {
		edge := func(r row) string { return store.EncodeCursor(order, r.sm, r.started) }
		first, last := edge(got[0]), edge(got[len(got)-1])
		switch {
		case backwards:
			p.Next, p.Prev = last, ifThen(more, first)
		default:
			p.Next, p.Prev = ifThen(more, last), ifThen(q.After != "", first)
		}
	}
	if err := s.attachOutcomes(ctx, p.Traces, index); err != nil {
		return nil, err
	}
	return p, nil
}

// Count says how many traces q selects (its cursors and limit aside).
func (s *Store) Count(ctx context.Context, q store.TraceQuery) (int, error) {
	where, args, err := s.queryWhere(ctx, &q)
	if err != nil {
		return 0, err
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM traces t`+whereClause(where), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting traces: %w", err)
	}
	return n, nil
}

// IDs returns the ids of every trace q selects (its cursors and limit
// aside), in id order.
func (s *Store) IDs(ctx context.Context, q store.TraceQuery) ([]string, error) {
	where, args, err := s.queryWhere(ctx, &q)
	if err != nil {
		return nil, err
	}
	ids, err := s.column(ctx, `SELECT t.id FROM traces t`+whereClause(where)+` ORDER BY t.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("selecting traces: %w", err)
	}
	return ids, nil
}

// column runs a query of one text column and returns its values (an empty
// list when there are none).
func (s *Store) column(ctx context.Context, query string, args ...any) ([]string, error) {
	out := []string{}
	err := s.each(ctx, query, func(rows *sql.Rows) error {
		var v string
		if err := rows.Scan(&v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	}, args...)
	return out, err
}

// queryWhere turns the query's filters into SQL conditions on traces t.
func (s *Store) queryWhere(ctx context.Context, q *store.TraceQuery) ([]string, []any, error) {
	f := q.Filter()
	where, args, err := s.filterWhere(ctx, &f)
	if err != nil {
		return nil, nil, err
	}
	if q.ModeCount != nil {
		codes := make([]any, len(taxonomy.MAST.Modes))
		for i, m := range taxonomy.MAST.Modes {
			codes[i] = m.Code
		}
		source, sourceArgs := sourceCondition("f.source", q.Sources)
		where = append(where, `(SELECT COUNT(DISTINCT f.mode) FROM findings f WHERE f.trace_id = t.id AND +f.verdict = 'present' AND +f.mode IN (`+
			placeholders(len(codes))+`)`+source+`) = ?`)
		args = append(append(append(args, codes...), sourceArgs...), *q.ModeCount)
	}
	if q.Unlabelled != "" {
		where = append(where, `NOT EXISTS (SELECT 1 FROM findings f WHERE f.trace_id = t.id AND f.source = ?)`)
		args = append(args, q.Unlabelled)
	}
	return where, args, nil
}

// filterWhere turns a filter (its selection of traces by id or file and its
// limit aside) into SQL conditions on traces t.
func (s *Store) filterWhere(ctx context.Context, f *store.Filter) ([]string, []any, error) {
	var where []string
	var args []any
	in := func(col string, values []string) {
		if values == nil {
			return
		}
		where = append(where, col+" IN ("+placeholders(len(values))+")")
		for _, v := range values {
			args = append(args, v)
		}
	}
	if f.Model != nil {
		// Every way the models asked for are written: the distinct stored
		// names are few, and read through the index.
		stored, err := s.Values(ctx, "model")
		if err != nil {
			return nil, nil, err
		}
		in("t.model", f.Aliases.Matching(f.Model, stored))
	}
	in("t.system", f.System)
	in("t.scenario", f.Scenario)
	in("t.format", f.Format)
	switch f.Outcome {
	case "":
	case "success", "failure", "unknown":
		cond, cargs := primarySuccess()
		where = append(where, cond+map[string]string{"success": " = 1", "failure": " = 0", "unknown": " IS NULL"}[f.Outcome])
		args = append(args, cargs...)
	default:
		return nil, nil, fmt.Errorf("unknown outcome %q: use one of %s", f.Outcome, strings.Join(store.OutcomeFilters, ", "))
	}
	// The unary + keeps SQLite on the findings' trace index, which covers
	// mode and verdict: with the index on (mode, verdict) it would read
	// every finding of the mode for each trace.
	source, sourceArgs := sourceCondition("f.source", f.Sources)
	if len(f.Sources) > 0 {
		annotated := `EXISTS (SELECT 1 FROM findings f WHERE f.trace_id = t.id` + source + `)`
		if store.MatchSource(detect.Source, f.Sources) {
			// The detectors' silence on a trace they ran on is a verdict.
			annotated = "(t.detected_with != '' OR " + annotated + ")"
		}
		where = append(where, annotated)
		args = append(args, sourceArgs...)
	}
	for _, mode := range f.Modes {
		where = append(where, `EXISTS (SELECT 1 FROM findings f WHERE f.trace_id = t.id AND +f.mode = ? AND +f.verdict = 'present'`+source+`)`)
		args = append(append(args, mode), sourceArgs...)
	}
	if f.Search != "" {
		match, err := SearchQuery(f.Search)
		if err != nil {
			return nil, nil, err
		}
		where = append(where, `t.id IN (SELECT k.trace_id FROM trace_keys k WHERE k.key IN (SELECT DISTINCT rowid >> 24 FROM steps_fts WHERE steps_fts MATCH ?))`)
		args = append(args, match)
	}
	if len(f.Paths) > 0 {
		var ors []string
		for _, p := range f.Paths {
			abs, err := filepath.Abs(p)
			if err != nil {
				return nil, nil, fmt.Errorf("path %s: %w", p, err)
			}
			ors = append(ors, `t.file = ? OR t.file LIKE ? ESCAPE '\'`)
			args = append(args, abs, likeEscape(strings.TrimSuffix(abs, string(filepath.Separator)))+string(filepath.Separator)+"%")
		}
		where = append(where, "("+strings.Join(ors, " OR ")+")")
	}
	return where, args, nil
}

// primarySuccess is an SQL expression for the success of a trace t's
// primary outcome (NULL when none is decided), picking it as
// trace.PrimaryOutcome does.
func primarySuccess() (string, []any) {
	pref := trace.OutcomePreference()
	var b strings.Builder
	args := make([]any, 0, len(pref))
	b.WriteString(`(SELECT o.success FROM outcomes o WHERE o.trace_id = t.id AND o.success IS NOT NULL ORDER BY CASE o.source`)
	for i, src := range pref {
		fmt.Fprintf(&b, " WHEN ? THEN %d", i)
		args = append(args, src)
	}
	fmt.Fprintf(&b, " ELSE %d END, o.source LIMIT 1)", len(pref))
	return b.String(), args
}

// sourceCondition is MatchSource in SQL: an " AND (...)" clause on col
// selecting the sources named or prefixed, "" when every source is. A
// prefix is a range ("judge:" up to "judge;", ';' following ':'), which,
// unlike LIKE, the index on findings' sources can seek.
func sourceCondition(col string, selected []string) (string, []any) {
	if len(selected) == 0 {
		return "", nil
	}
	var ors []string
	var args []any
	for _, want := range selected {
		ors = append(ors, col+` = ? OR (`+col+` >= ? AND `+col+` < ?)`)
		args = append(args, want, want+":", want+";")
	}
	return " AND (" + strings.Join(ors, " OR ") + ")", args
}

// annotatedEnough is where TracesAnnotatedBy stops counting a source's
// findings: past it, which source is larger hardly matters, and counting a
// judge's million findings would cost more than the rest. (A variable, so
// that tests take both ways on a small store.)
var annotatedEnough = 50_000

// TracesAnnotatedBy returns, sorted, the ids of the traces on which each
// of the sources (each selected as MatchSource selects) has a finding:
// the traces they can be compared on. It starts from the source with the
// fewest findings and keeps those of its traces the others annotated too,
// so that a labeller's few hundred traces are found in milliseconds among
// a judge's hundred thousand.
func (s *Store) TracesAnnotatedBy(ctx context.Context, sources []string) ([]string, error) {
	if len(sources) == 0 {
		return nil, errors.New("no source to select traces by")
	}
	enough := annotatedEnough
	counts := make([]int, len(sources))
	for i, src := range sources {
		cond, args := sourceCondition("source", []string{src})
		err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM findings WHERE 1`+cond+` LIMIT ?)`, append(args, enough)...).Scan(&counts[i])
		if err != nil {
			return nil, fmt.Errorf("counting the findings of %s: %w", src, err)
		}
	}
	first := 0
	for i, n := range counts {
		if n < counts[first] {
			first = i
		}
	}
	if counts[first] == enough && len(sources) < 64 {
		// Every source annotated a large part of the store: one pass over
		// the summaries beats collecting each one's traces from its
		// findings (1.4 s for a judge's verdicts on 100,000 traces).
		return s.tracesAnnotatedInSummary(ctx, sources)
	}
	cond, args := sourceCondition("source", []string{sources[first]})
	ids, err := s.column(ctx, `SELECT DISTINCT trace_id FROM findings WHERE 1`+cond+` ORDER BY trace_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("selecting the traces of %s: %w", sources[first], err)
	}
	for i, src := range sources {
		if i == first || len(ids) == 0 {
			continue
		}
		cond, args := sourceCondition("source", []string{src})
		keep := map[string]bool{}
		err := s.queryIDs(ctx, ids, `SELECT DISTINCT trace_id FROM findings WHERE trace_id IN (%s)`+cond, func(rows *sql.Rows) error {
			var id string
			err := rows.Scan(&id)
			keep[id] = true
			return err
		}, args...)
		if err != nil {
			return nil, err
		}
		ids = slices.DeleteFunc(ids, func(id string) bool { return !keep[id] })
	}
	return ids, nil
}

func whereClause(where []string) string {
	if len(where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(where, " AND ")
}

func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

func ifThen(cond bool, s string) string {
	if cond {
		return s
	}
	return ""
}

// Values lists the distinct values of a trace field (model, system,
// scenario or format) in the store, sorted, for filter menus.
func (s *Store) Values(ctx context.Context, field string) ([]string, error) {
	col := map[string]string{"model": "model", "system": "system", "scenario": "scenario", "format": "format"}[field]
	if col == "" {
		return nil, fmt.Errorf("no trace field %q", field)
	}
	return s.distinct(ctx, "traces", col)
}

// AllSources lists every annotation source in the store, sorted.
func (s *Store) AllSources(ctx context.Context) ([]string, error) {
	return s.distinct(ctx, "findings", "source")
}

// DecidesModes says whether a source has a finding with a mode: some
// sources only locate errors (Who&When's decisive errors name no mode).
func (s *Store) DecidesModes(ctx context.Context, source string) (bool, error) {
	var one int
	err := s.db.QueryRowContext(ctx, `SELECT 1 FROM findings WHERE source = ? AND mode != '' LIMIT 1`, source).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("source %s: %w", source, err)
	}
	return true, nil
}

// distinct lists the distinct values of an indexed column by skipping
// through its index, one lookup per value, rather than reading every row.
func (s *Store) distinct(ctx context.Context, table, col string) ([]string, error) {
	out, err := s.column(ctx, fmt.Sprintf(`WITH RECURSIVE v(x) AS (
		SELECT MIN(%[2]s) FROM %[1]s
		UNION ALL
		SELECT (SELECT MIN(%[2]s) FROM %[1]s WHERE %[2]s > v.x) FROM v WHERE v.x IS NOT NULL
	) SELECT x FROM v WHERE x IS NOT NULL`, table, col))
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", col, err)
	}
	return out, nil
}
