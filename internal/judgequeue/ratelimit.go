package judgequeue

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/faultline/faultline/internal/judge"
)

// The rate limit all workers share: one row per endpoint holding the
// earliest time its next call may start. A call reserves a slot by moving
// that time on by one interval (60s / requests per minute) in a single
// atomic UPDATE, then sleeps until its slot. The row lock orders workers
// reserving at once, and the server's clock is the only one read, so
// workers on machines whose clocks disagree still keep to the limit. It is
// the same spacing as the in-process client's limiter (one call per
// interval, no burst), only counted across processes.
const rateTable = `CREATE TABLE IF NOT EXISTS faultline_judge_rate (
	endpoint TEXT PRIMARY KEY,
	next_at TIMESTAMPTZ NOT NULL
)`

// sharedLimit is the rate limit of the endpoints, kept in the database.
type sharedLimit struct{ db *sql.DB }

// wait reserves the endpoint's next call slot at rpm requests per minute
// and sleeps until it. A slot reserved by a call cancelled meanwhile is
// lost, which only slows the others by one interval.
func (l sharedLimit) wait(ctx context.Context, endpoint string, rpm float64) error {
	if rpm <= 0 {
		return nil
	}
	_, d, err := l.reserve(ctx, endpoint, rpm)
	if err != nil || d <= 0 {
		return err
	}
	return judge.Sleep(ctx, d)
}

// reserve takes the endpoint's next call slot: it returns the slot's time
// and how long from now, both by the server's clock.
func (l sharedLimit) reserve(ctx context.Context, endpoint string, rpm float64) (time.Time, time.Duration, error) {
	interval := time.Duration(float64(time.Minute) / rpm)
	var slot time.Time
	var secs float64
	err := l.db.QueryRowContext(ctx, `INSERT INTO faultline_judge_rate AS r (endpoint, next_at)
		VALUES ($1, clock_timestamp() + make_interval(secs => $2))
		ON CONFLICT (endpoint) DO UPDATE SET next_at = greatest(r.next_at, clock_timestamp()) + make_interval(secs => $2)
		RETURNING r.next_at - make_interval(secs => $2), extract(epoch FROM r.next_at - make_interval(secs => $2) - clock_timestamp())::float8`,
		endpoint, interval.Seconds()).Scan(&slot, &secs)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("reserving a call to %s under the shared rate limit: %w", endpoint, err)
	}
	return slot, time.Duration(secs * float64(time.Second)), nil
}

// limited is a backend whose calls keep to the shared rate limit, and
// which remembers the last error a call met, for telling a transient
// failure (retried by the queue) from a lasting one.
type limited struct {
	backend  judge.Backend
	limit    sharedLimit
	endpoint string
	rpm      float64
	lastErr  error
}

func (b *limited) Complete(ctx context.Context, req judge.Request) (*judge.Response, error) {
	if err := b.limit.wait(ctx, b.endpoint, b.rpm); err != nil {
		b.lastErr = err
		return nil, err
	}
	resp, err := b.backend.Complete(ctx, req)
	if err != nil {
		b.lastErr = err
	}
	return resp, err
}
