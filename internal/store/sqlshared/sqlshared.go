// Package sqlshared is the database/sql code the SQL backends (store/sqlite
// and store/postgres) share: what reads their tables the same way in both
// dialects, the dialect's placeholders and queries aside.
package sqlshared

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// Querier is a database, a connection or a transaction.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Each runs a query and calls scan for each row.
func Each(ctx context.Context, db Querier, query string, args []any, scan func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, query, args...)
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

// ScanOutcome reads a row of trace_id, source, metric, score, success,
// detail.
func ScanOutcome(rows *sql.Rows) (string, trace.Outcome, error) {
	var id string
	var o trace.Outcome
	err := rows.Scan(&id, &o.Source, &o.Metric, &o.Score, &o.Success, &o.Detail)
	return id, o, err
}

// ParseTime reads a time as both backends store it: RFC 3339 text, "" for
// none.
func ParseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// AttachOutcomes reads the outcome rows (trace_id, source, metric, score,
// success, detail) that each runs its query for into the summaries, out[i]
// being trace i of index, and sets their primary outcome.
func AttachOutcomes(out []store.Summary, index map[string]int, each func(scan func(*sql.Rows) error) error) error {
	err := each(func(rows *sql.Rows) error {
		id, o, err := ScanOutcome(rows)
		if err != nil {
			return err
		}
		if i, ok := index[id]; ok {
			out[i].Outcomes = append(out[i].Outcomes, o)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading outcomes: %w", err)
	}
	for i := range out {
		out[i].Outcome = trace.PrimaryOutcome(out[i].Outcomes)
	}
	return nil
}
