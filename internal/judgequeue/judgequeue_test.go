package judgequeue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/faultline/faultline/internal/judge"
	"github.com/faultline/faultline/internal/judge/judgetest"
	"github.com/faultline/faultline/internal/store/postgres/pgtest"
)

func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"429", &judge.StatusError{Status: http.StatusTooManyRequests}, true},
		{"503 wrapped", fmt.Errorf("window 1 of 2: %w", &judge.StatusError{Status: http.StatusServiceUnavailable}), true},
		{"408", &judge.StatusError{Status: http.StatusRequestTimeout}, true},
		{"400", &judge.StatusError{Status: http.StatusBadRequest}, false},
		{"401 (fatal: a worker's key may be fixed meanwhile)", &judge.StatusError{Status: http.StatusUnauthorized}, true},
		{"network", errors.New("dial tcp: connection refused"), true},
		{"cancelled", fmt.Errorf("waiting: %w", context.Canceled), false},
		{"none", nil, false},
	} {
		if got := Transient(tc.err); got != tc.want {
			t.Errorf("Transient(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestBackoff doubles the pause with each attempt, within its bounds.
func TestBackoff(t *testing.T) {
	b := backoff{min: time.Second, max: 10 * time.Second}
	for _, tc := range []struct {
		attempt  int
		from, to time.Duration
	}{{1, 500 * time.Millisecond, time.Second}, {2, time.Second, 2 * time.Second}, {3, 2 * time.Second, 4 * time.Second}, {5, 5 * time.Second, 10 * time.Second}, {80, 5 * time.Second, 10 * time.Second}} {
		now := time.Now()
		d := b.NextRetry(&rivertype.JobRow{Attempt: tc.attempt}).Sub(now)
		if d < tc.from-time.Millisecond || d > tc.to+time.Second {
			t.Errorf("attempt %d: pause %s, want %s to %s", tc.attempt, d, tc.from, tc.to)
		}
	}
}

// TestSharedLimit: reservations from several workers at once get distinct
// slots, one interval apart, on each endpoint apart.
func TestSharedLimit(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("pgx", pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := Setup(ctx, db); err != nil {
		t.Fatal(err)
	}
	// 6 requests per minute: 10s apart, so that reservations made within a
	// second all queue up behind each other.
	const rpm, n = 6, 8
	l := sharedLimit{db}
	for _, endpoint := range []string{"http://a/v1", "http://b/v1"} {
		var mu sync.Mutex
		var slots []time.Time
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				slot, _, err := l.reserve(ctx, endpoint, rpm)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				slots = append(slots, slot)
				mu.Unlock()
			})
		}
		wg.Wait()
		slices.SortFunc(slots, func(a, b time.Time) int { return a.Compare(b) })
		for i := 1; i < len(slots); i++ {
			if d := slots[i].Sub(slots[i-1]); d != 10*time.Second {
				t.Errorf("%s: slots %d and %d are %s apart, want 10s", endpoint, i-1, i, d)
			}
		}
	}
}

// fixedPolicy is a retry policy whose next attempt is at a set time.
type fixedPolicy time.Time

func (p fixedPolicy) NextRetry(*rivertype.JobRow) time.Time { return time.Time(p) }

// TestPauses: a job whose call the endpoint answered with Retry-After (a
// 429 or 503 from a server, through the worker's client) is tried again no
// sooner than it asked, up to maxPause; otherwise when the policy says.
func TestPauses(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	answered := func(status int, retryAfter string) error {
		srv := judgetest.NewServer(func(judgetest.Call) judgetest.Reply {
			return judgetest.Reply{Status: status, Header: map[string]string{"Retry-After": retryAfter}, Body: "slow down"}
		})
		defer srv.Close()
		c := judge.NewOpenAI(judge.ClientOptions{BaseURL: srv.URL(), Format: judge.FormatSchema, Timeout: 5 * time.Second})
		_, err := c.Complete(context.Background(), judge.Request{Model: "fake-model", Messages: []judge.Message{{Role: "user", Content: "u"}}})
		return err
	}
	for _, tc := range []struct {
		name   string
		err    error
		policy time.Duration // from now
		want   time.Duration // from now; 0: the zero time, the policy's cue
	}{
		{"429 asks longer than the policy", answered(http.StatusTooManyRequests, "90"), 10 * time.Second, 90 * time.Second},
		{"503 asks longer than the policy", answered(http.StatusServiceUnavailable, "30"), 10 * time.Second, 30 * time.Second},
		{"429 asks shorter than the policy", answered(http.StatusTooManyRequests, "1"), 10 * time.Second, 10 * time.Second},
		{"429 asks past the cap", answered(http.StatusTooManyRequests, "86400"), 10 * time.Second, maxPause},
		{"wrapped", fmt.Errorf("window 1 of 2: %w", &judge.StatusError{Status: 429, RetryAfter: time.Minute}), time.Second, time.Minute},
		{"429 without Retry-After", answered(http.StatusTooManyRequests, ""), 10 * time.Second, 0},
		{"network", errors.New("dial tcp: connection refused"), 10 * time.Second, 0},
	} {
		var p pauses
		job := &rivertype.JobRow{ID: 7, Attempt: 1}
		p.note(job.ID, tc.err)
		got := p.nextRetry(job, fixedPolicy(now.Add(tc.policy)), now)
		switch {
		case tc.want == 0 && !got.IsZero():
			t.Errorf("%s: next attempt at %s, want the policy's", tc.name, got)
		case tc.want != 0 && !got.Equal(now.Add(tc.want)):
			t.Errorf("%s: next attempt %s from now, want %s", tc.name, got.Sub(now), tc.want)
		}
		if again := p.nextRetry(job, fixedPolicy(now), now); !again.IsZero() {
			t.Errorf("%s: the pause is kept after its attempt: %s", tc.name, again)
		}
	}
}
