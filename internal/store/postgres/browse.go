package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/faultline/faultline/internal/store"
)

// sortKeys are the keys each of store.SortOrders pages by, the id last.
var sortKeys = map[string][]string{
	"id":      {"t.id"},
	"model":   {"t.model", "t.id"},
	"started": {"t.started", "t.id"},
	"steps":   {"t.step_count", "t.id"},
}

// Browse returns one page of the traces q selects.
func (s *Store) Browse(ctx context.Context, q store.TraceQuery) (*store.Page, error) {
	order, limit, err := q.Paging()
	if err != nil {
		return nil, err
	}
	keys := sortKeys[order]
	var a args
	where, err := s.traceQueryConditions(ctx, &q, &a)
	if err != nil {
		return nil, err
	}
	// The page before a cursor is read backwards from it, then turned
	// around.
	backwards := q.Before != ""
	desc := q.Desc != backwards
	if cursor := q.After + q.Before; cursor != "" {
		values, err := store.DecodeCursor(cursor, order)
		if err != nil {
			return nil, err
		}
		marks := make([]string, len(values))
		for i, v := range values {
			marks[i] = a.add(v)
		}
		cmp := " > "
		if desc {
			cmp = " < "
		}
		where = append(where, "("+strings.Join(keys, ", ")+")"+cmp+"("+strings.Join(marks, ", ")+")")
	}
	direction := ""
	if desc {
		direction = " DESC"
	}
	sorted := strings.Join(keys, direction+", ") + direction
	var got []store.Summary
	var started []string
	err = s.each(ctx, `SELECT t.id, t.format, t.system, t.model, t.task, t.scenario, t.trial, t.step_count, t.source, t.started FROM traces t`+
		where.where()+" ORDER BY "+sorted+" LIMIT "+a.add(limit+1), a, func(rows *sql.Rows) error {
		var sm store.Summary
		var at string
		if err := rows.Scan(&sm.ID, &sm.Format, &sm.System, &sm.Model, &sm.Task, &sm.Scenario, &sm.Trial, &sm.Steps, &sm.Source, &at); err != nil {
			return err
		}
		sm.Started = parseTime(at)
		got, started = append(got, sm), append(started, at)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing traces: %w", err)
	}
	more := len(got) > limit
	got, started = got[:min(len(got), limit)], started[:min(len(started), limit)]
	if backwards {
		slices.Reverse(got)
		slices.Reverse(started)
	}
	p := &store.Page{Traces: got}
	if n := len(got); n > 0 {
		first, last := store.EncodeCursor(order, got[0], started[0]), store.EncodeCursor(order, got[n-1], started[n-1])
		if backwards {
			p.Next = last
			if more {
				p.Prev = first
			}
		} else {
			if more {
				p.Next = last
			}
			if q.After != "" {
				p.Prev = first
			}
		}
	}
	if err := s.attachOutcomes(ctx, p.Traces); err != nil {
		return nil, err
	}
	return p, nil
}

// Count says how many traces q selects (its cursors and limit aside).
func (s *Store) Count(ctx context.Context, q store.TraceQuery) (int, error) {
	var a args
	where, err := s.traceQueryConditions(ctx, &q, &a)
	if err != nil {
		return 0, err
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM traces t`+where.where(), a...).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting traces: %w", err)
	}
	return n, nil
}

// IDs returns the ids of every trace q selects (its cursors and limit
// aside), in id order.
func (s *Store) IDs(ctx context.Context, q store.TraceQuery) ([]string, error) {
	var a args
	where, err := s.traceQueryConditions(ctx, &q, &a)
	if err != nil {
		return nil, err
	}
	ids, err := s.column(ctx, `SELECT t.id FROM traces t`+where.where()+` ORDER BY t.id`, a)
	if err != nil {
		return nil, fmt.Errorf("selecting traces: %w", err)
	}
	return ids, nil
}

// TracesAnnotatedBy returns, sorted, the ids of the traces on which each
// of the sources (each selected as store.MatchSource selects) has a
// finding: the traces they can be compared on.
func (s *Store) TracesAnnotatedBy(ctx context.Context, sources []string) ([]string, error) {
	if len(sources) == 0 {
		return nil, errors.New("no source to select traces by")
	}
	var a args
	var each []string
	for _, src := range sources {
		each = append(each, `SELECT DISTINCT trace_id FROM findings f WHERE true`+sourceMatch("f.source", []string{src}, &a))
	}
	ids, err := s.column(ctx, strings.Join(each, " INTERSECT ")+" ORDER BY 1", a)
	if err != nil {
		return nil, fmt.Errorf("selecting the traces of %s: %w", strings.Join(sources, ", "), err)
	}
	return ids, nil
}

// Values lists the distinct values of a trace field (model, system,
// scenario or format) in the store, sorted, for filter menus.
func (s *Store) Values(ctx context.Context, field string) ([]string, error) {
	switch field {
	case "model", "system", "scenario", "format":
	default:
		return nil, fmt.Errorf("no trace field %q", field)
	}
	out, err := s.column(ctx, `SELECT DISTINCT `+field+` FROM traces ORDER BY 1`, nil)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", field, err)
	}
	return out, nil
}

// AllSources lists every annotation source in the store, sorted.
func (s *Store) AllSources(ctx context.Context) ([]string, error) {
	out, err := s.column(ctx, `SELECT DISTINCT source FROM findings ORDER BY 1`, nil)
	if err != nil {
		return nil, fmt.Errorf("listing sources: %w", err)
	}
	return out, nil
}

// DecidesModes says whether a source has a finding with a mode: some
// sources only locate errors (Who&When's decisive errors name no mode).
func (s *Store) DecidesModes(ctx context.Context, source string) (bool, error) {
	var yes bool
	err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM findings WHERE source = $1 AND mode <> '')`, source).Scan(&yes)
	if err != nil {
		return false, fmt.Errorf("source %s: %w", source, err)
	}
	return yes, nil
}
