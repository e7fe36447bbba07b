package judgequeue

import (
	"context"
	"database/sql"
	"fmt"
)

// Count is where the judge jobs of one model stand.
type Count struct {
	Model string `json:"model"`
	// Queued are waiting for a worker, Retrying among them waiting for
	// their next attempt after a failed one.
	Queued   int `json:"queued"`
	Retrying int `json:"retrying"`
	Running  int `json:"running"`
	// Done are finished with a judgement (or found judged already);
	// Failed finished with the trace recorded as failed, or were given up.
	Done         int      `json:"done"`
	Failed       int      `json:"failed"`
	Calls        int      `json:"calls"`
	InputTokens  int      `json:"input_tokens"`
	OutputTokens int      `json:"output_tokens"`
	Cost         *float64 `json:"cost"` // dollars; nil when no finished job had a price
}

// Status counts the judge jobs by model. Calls, tokens and cost are those
// of the finished jobs' last attempts. A database no job was ever queued
// in has none.
func Status(ctx context.Context, db *sql.DB) ([]Count, error) {
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT to_regclass('river_job') IS NOT NULL`).Scan(&exists); err != nil {
		return nil, fmt.Errorf("reading the judge queue: %w", err)
	}
	if !exists {
		return nil, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT args->>'model', state::text, COALESCE(metadata->'output'->>'status', ''), count(*),
		COALESCE(sum((metadata->'output'->>'calls')::bigint), 0), COALESCE(sum((metadata->'output'->>'input_tokens')::bigint), 0),
		COALESCE(sum((metadata->'output'->>'output_tokens')::bigint), 0), sum((metadata->'output'->>'cost')::float8)
		FROM river_job WHERE kind = $1 GROUP BY 1, 2, 3 ORDER BY 1`, Kind)
	if err != nil {
		return nil, fmt.Errorf("reading the judge queue: %w", err)
	}
	defer rows.Close()
	var out []Count
	for rows.Next() {
		var model, state, status string
		var n, calls, in, outTok int
		var cost sql.NullFloat64
		if err := rows.Scan(&model, &state, &status, &n, &calls, &in, &outTok, &cost); err != nil {
			return nil, fmt.Errorf("reading the judge queue: %w", err)
		}
		if len(out) == 0 || out[len(out)-1].Model != model {
			out = append(out, Count{Model: model})
		}
		c := &out[len(out)-1]
		switch state {
		case "available", "pending", "scheduled":
			c.Queued += n
		case "retryable":
			c.Queued += n
			c.Retrying += n
		case "running":
			c.Running += n
		case "completed":
			if status == "failed" {
				c.Failed += n
			} else {
				c.Done += n
			}
		default: // discarded, cancelled: given up without a record
			c.Failed += n
		}
		c.Calls += calls
		c.InputTokens += in
		c.OutputTokens += outTok
		if cost.Valid {
			total := cost.Float64
			if c.Cost != nil {
				total += *c.Cost
			}
			c.Cost = &total
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the judge queue: %w", err)
	}
	return out, nil
}
