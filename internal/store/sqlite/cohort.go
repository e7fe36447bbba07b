package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// LoadCohort reads the cohort of the given traces (every stored trace when
// ids is nil), and calls mark for every finding of the selected sources (as
// MatchSource selects them) that marks a mode present, once the traces are
// loaded. The marks, the bulk of the data, are not kept: the caller folds
// them into whatever compact form it needs as they stream past.
func (s *Store) LoadCohort(ctx context.Context, ids []string, sources []string, mark func(store.Mark)) (*store.Cohort, error) {
	c := &store.Cohort{}
	intern := map[string]string{}
	in := func(v string) string {
		if w, ok := intern[v]; ok {
			return w
		}
		intern[v] = v
		return v
	}
	err := s.eachSelected(ctx, ids, "id", `SELECT id, model, system, scenario, detected_with != '' FROM traces WHERE 1 %s ORDER BY id`, func(rows *sql.Rows) error {
		var t store.CohortTrace
		if err := rows.Scan(&t.ID, &t.Model, &t.System, &t.Scenario, &t.Detected); err != nil {
			return err
		}
		t.Model, t.System, t.Scenario = in(t.Model), in(t.System), in(t.Scenario)
		c.Traces = append(c.Traces, t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading traces: %w", err)
	}
	// Chunks of ids come back in chunk order.
	sort.Slice(c.Traces, func(i, j int) bool { return c.Traces[i].ID < c.Traces[j].ID })
	index := make(map[string]int32, len(c.Traces))
	for i, t := range c.Traces {
		index[t.ID] = int32(i)
	}
	// A trace's findings mostly come one after another, so the last id
	// saves most of the map lookups.
	lastID, last := "", int32(-1)
	lookup := func(id string) int32 {
		if id != lastID {
			lastID, last = id, index[id]
		}
		return last
	}

	outcomes := make([][]trace.Outcome, len(c.Traces))
	// The detail is read only where a scorer left the outcome undecided: it
	// says why.
	err = s.eachSelected(ctx, ids, "trace_id", `SELECT trace_id, source, metric, score, success, CASE WHEN success IS NULL THEN detail ELSE '' END FROM outcomes WHERE 1 %s`, func(rows *sql.Rows) error {
		var id string
		o, err := scanOutcome(rows, &id)
		if err != nil {
			return err
		}
		i := lookup(id)
		outcomes[i] = append(outcomes[i], o)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading outcomes: %w", err)
	}
	for i, os := range outcomes {
		c.Traces[i].Outcome = trace.PrimaryOutcome(os)
		if c.Traces[i].Outcome == nil {
			c.Traces[i].Undecided = store.UndecidedStatus(os)
		}
	}

	sourceIndex := map[string]int32{}
	err = s.eachSelected(ctx, ids, "trace_id", `SELECT DISTINCT trace_id, source FROM findings WHERE 1 %s`, func(rows *sql.Rows) error {
		var id, src string
		if err := rows.Scan(&id, &src); err != nil {
			return err
		}
		si, ok := sourceIndex[src]
		if !ok {
			si = int32(len(c.Sources))
			sourceIndex[src] = si
			c.Sources = append(c.Sources, src)
		}
		c.Annotations = append(c.Annotations, store.Annotation{Trace: lookup(id), Source: si})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading annotation sources: %w", err)
	}
	sortSources(c)

	// One row per present finding, with its cited steps as stored: the
	// first is read here rather than with json_extract, which costs SQLite
	// more than the whole scan. With every source selected, the source
	// column is not even read.
	var id, mode, src string
	var steps sql.RawBytes
	columns, dest := "trace_id, mode, steps", []any{&id, &mode, &steps}
	selected := map[string]bool{}
	if len(sources) > 0 {
		columns, dest = columns+", source", append(dest, &src)
		for _, name := range c.Sources {
			selected[name] = store.MatchSource(name, sources)
		}
	}
	err = s.eachSelected(ctx, ids, "trace_id", `SELECT `+columns+` FROM findings WHERE verdict = 'present' AND mode != '' %s`, func(rows *sql.Rows) error {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		if len(sources) == 0 || selected[src] {
			mark(store.Mark{Trace: lookup(id), Step: leadingStep(steps), Mode: mode})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading findings: %w", err)
	}
	return c, nil
}

// leadingStep reads the first number of a JSON array of step indices such
// as [12,4]; -1 for an empty array or anything else.
func leadingStep(steps []byte) int32 {
	rest, ok := bytes.CutPrefix(bytes.TrimSpace(steps), []byte("["))
	rest = bytes.TrimSpace(rest)
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	if !ok || end == 0 || end > 9 {
		return -1
	}
	n, _ := strconv.Atoi(string(rest[:end]))
	return int32(n)
}

// sortSources puts Sources in order and renumbers the annotations to match.
func sortSources(c *store.Cohort) {
	sorted := append([]string(nil), c.Sources...)
	sort.Strings(sorted)
	renumber := make([]int32, len(c.Sources))
	for i, src := range c.Sources {
		renumber[i] = int32(sort.SearchStrings(sorted, src))
	}
	for i := range c.Annotations {
		c.Annotations[i].Source = renumber[c.Annotations[i].Source]
	}
	c.Sources = sorted
}

// eachSelected runs a query over the selected traces, calling scan for each
// row: one pass over the table when ids is nil (every trace), else in
// chunks of ids. The query's %s is where "AND column IN (...)" goes.
func (s *Store) eachSelected(ctx context.Context, ids []string, column, query string, scan func(*sql.Rows) error) error {
	if ids != nil {
		return s.queryIDs(ctx, ids, fmt.Sprintf(query, "AND "+column+" IN (%s)"), scan)
	}
	return s.each(ctx, fmt.Sprintf(query, ""), scan)
}

// each runs a query and calls scan for each row.
func (s *Store) each(ctx context.Context, query string, scan func(*sql.Rows) error, args ...any) error {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
