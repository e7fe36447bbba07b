package judgequeue

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"time"

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
