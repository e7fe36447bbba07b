package judgequeue

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/faultline/faultline/internal/judge"
)

// Transient says whether a call that failed with err may succeed later, so
// that the job is retried rather than its trace recorded as failed. It is
// the judge client's own rule (judge.OpenAI.Complete retries everything but
// an HTTP answer other than 408, 429 or 5xx): a rate limit, a server
// error, a timeout, a network error, a malformed 200 are transient; a bad
// request is not, nor a cancellation. A bad key, an unknown model or URL
// (judge.ErrFatal) stop an in-process run; a worker retries them too, as
// the operator may fix the worker's key while the job waits.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var se *judge.StatusError
	if errors.As(err, &se) {
		switch {
		case se.Status == http.StatusTooManyRequests, se.Status == http.StatusRequestTimeout, se.Status >= 500:
			return true
		case errors.Is(err, judge.ErrFatal):
			return true
		}
		return false
	}
	return true
}

// backoff is the queue's retry policy: an exponentially growing pause from
// min to max, with jitter so that the jobs a rate limit failed together do
// not all return at once. The pause is kept in the job's row, so a retry
// waits on no worker and survives them all being restarted.
type backoff struct{ min, max time.Duration }

func (b backoff) NextRetry(job *rivertype.JobRow) time.Time {
	n := min(max(job.Attempt-1, 0), 30) // job.Attempt is the attempt that just failed
	d := b.min << n
	if d <= 0 || d > b.max {
		d = b.max
	}
	return time.Now().Add(d/2 + rand.N(d/2+1))
}

// maxPause is the longest Retry-After a job's next attempt waits for: the
// client's own cap (see judge.DefaultClientOptions). A job waits in the
// database at no worker's cost, but an endpoint asking for hours is out of
// quota or down, which the job's failing attempts should show in --status
// and, after the last, on the trace, rather than a queue that seems stuck.
var maxPause = judge.DefaultClientOptions.MaxRetryAfter

// pauses keeps, by job, the pause the endpoint asked for (Retry-After)
// when the job's attempt failed, until River asks when to try the job
// again (jobWorker.NextRetry), as it does in the same process once the
// attempt returns its error.
type pauses struct {
	mu    sync.Mutex
	byJob map[int64]time.Duration
}

// note keeps the pause err carries, if any, for the job.
func (p *pauses) note(job int64, err error) {
	var se *judge.StatusError
	if !errors.As(err, &se) || se.RetryAfter <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byJob == nil {
		p.byJob = map[int64]time.Duration{}
	}
	p.byJob[job] = se.RetryAfter
}

// nextRetry is when a failed job is tried again: when policy says, but not
// before the pause the endpoint asked for (at most maxPause) is over; the
// zero time, River's cue to ask policy itself, when it asked for none.
// Jobs a rate limit failed together come back together only where the
// pause outlasts the policy's jittered one, and the shared rate limit then
// spaces their calls.
func (p *pauses) nextRetry(job *rivertype.JobRow, policy river.ClientRetryPolicy, now time.Time) time.Time {
	p.mu.Lock()
	pause, ok := p.byJob[job.ID]
	delete(p.byJob, job.ID)
	p.mu.Unlock()
	if !ok {
		return time.Time{}
	}
	return later(policy.NextRetry(job), now.Add(min(pause, maxPause)))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
