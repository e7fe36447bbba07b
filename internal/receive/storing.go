package receive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/ingest/otel"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// Loader reads the trace stored under an id, or an error matching
// store.ErrNotFound when there is none.
type Loader interface {
	Load(ctx context.Context, id string) (*trace.Trace, error)
}

// Backoff between attempts to store a trace while the store fails, and how
// many attempts an error that is not transient gets.
const (
	retryFirst     = 100 * time.Millisecond
	retryMax       = 5 * time.Second
	attemptsOnFail = 3
)

// signal wakes the store worker.
func (r *Receiver) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// next waits for the oldest queued trace; nil once the queue is closed and
// empty.
func (r *Receiver) next() *openTrace {
	for {
		r.mu.Lock()
		if len(r.queue) > 0 {
			ot := r.queue[0]
			r.mu.Unlock()
			return ot
		}
		closed := r.closed
		r.mu.Unlock()
		if closed {
			return nil
		}
		<-r.wake
	}
}

// storeDown says how long until the store is tried again while it fails,
// 0 when it does not.
func (r *Receiver) storeDown(now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failing.IsZero() {
		return 0
	}
	return max(r.failing.Sub(now), time.Second)
}

// store maps, detects and stores each queued trace, one at a time, oldest
// first. A trace stays queued (and counted in the limits) until the store
// takes it: a failed attempt is retried with backoff, and until one
// succeeds requests are refused with 503 (see storeDown). Once ctx is done
// (shutdown gave up waiting) what is still queued is counted lost.
func (r *Receiver) store(ctx context.Context) {
	for ot := r.next(); ot != nil; ot = r.next() {
		wait, failures := retryFirst, 0
		for {
			err := r.storeOne(ctx, ot)
			if err == nil {
				break
			}
			failures++
			if ctx.Err() != nil || (!r.cfg.Transient(err) && failures >= attemptsOnFail) {
				r.lose(ot, err)
				break
			}
			r.mu.Lock()
			r.stats.StoreRetries++
			r.failing = time.Now().Add(wait)
			queued := len(r.queue)
			r.mu.Unlock()
			if failures == 1 || failures%10 == 0 {
				r.cfg.Log.Warn("the store failed; retrying, and refusing requests with 503 meanwhile", "trace", ot.id.String(),
					"attempts", failures, "retry_in", wait.String(), "queued_traces", queued, "err", err)
			}
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
			wait = min(2*wait, retryMax)
		}
		r.mu.Lock()
		r.failing = time.Time{}
		r.queue = r.queue[1:]
		r.release(ot)
		r.mu.Unlock()
		if r.spool != nil {
			r.spool.done(ot.entries)
		}
	}
}

// lose gives up a trace that could not be stored: an error that lasted, or
// shutdown no longer waiting for the store.
func (r *Receiver) lose(ot *openTrace, err error) {
	r.mu.Lock()
	r.stats.Lost++
	r.mu.Unlock()
	if r.spool != nil {
		// Still in the spool: the next start tries again.
		ot.entries = nil
		r.cfg.Log.Error("trace not stored; it stays in the spool for the next start", "trace", ot.id.String(), "spans", len(ot.spans), "err", err)
		return
	}
	r.cfg.Log.Error("acknowledged trace lost: not stored", "trace", ot.id.String(), "spans", len(ot.spans), "err", err)
}

// storeOne stores one trace, or merges it into the trace stored under its
// id. An error means it may be tried again.
func (r *Receiver) storeOne(ctx context.Context, ot *openTrace) error {
	id := ot.id.String()
	if r.cfg.Loader != nil {
		stored, err := r.cfg.Loader.Load(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return err
		default:
			m, changed := merge(stored, ot.spans)
			if !changed {
				r.count(&r.stats.NotStored)
				r.cfg.Log.Info("spans of a stored trace arrived again: it holds them already, nothing to merge", "trace", id, "spans", len(ot.spans), "steps", len(stored.Steps))
				return nil
			}
			r.cfg.Log.Info("late spans merged into the stored trace", "trace", id, "spans", len(ot.spans), "steps_added", len(m.Steps)-len(stored.Steps), "steps", len(m.Steps))
			return r.write(ctx, ot, m, true)
		}
	}
	if ot.ifStored {
		r.count(&r.stats.NotStored)
		r.cutOff(ot)
		return nil
	}
	t, notes := otel.Trace(ot.spans, ot.format, r.cfg.Source)
	for _, n := range notes {
		r.cfg.Log.Info("trace "+id+": "+n, "trace", id)
	}
	if t == nil {
		r.count(&r.stats.NotStored)
		return nil
	}
	if !ot.root && !ot.late {
		r.cfg.Log.Warn("trace stored without its root span after the idle timeout", "trace", id, "spans", len(ot.spans))
		t.SetMeta("otel.incomplete", "no root span within the idle timeout")
	}
	return r.write(ctx, ot, t, false)
}

// write hands a trace to the sink, as the file "otlp:<id>" whose content is
// ot's spans.
func (r *Receiver) write(ctx context.Context, ot *openTrace, t *trace.Trace, merged bool) error {
	info := ingest.FileInfo{Path: "otlp:" + t.ID, Hash: ot.hash(), Size: int64(ot.bytes), Format: ot.format}
	_, err := ingest.StoreFile(ctx, r.cfg.Sink, info, t)
	switch {
	case errors.Is(err, ingest.ErrRefused):
		// A fragment of a trace stored longer, with no Loader to merge it
		// into: the stored trace stays whole.
		r.count(&r.stats.NotStored)
		r.cfg.Log.Warn("trace not stored: the sink refused it", "trace", t.ID, "spans", len(ot.spans), "err", err)
		return nil
	case err != nil:
		return err
	}
	r.mu.Lock()
	r.stats.Stored++
	if merged {
		r.stats.Merged++
	}
	r.mu.Unlock()
	if r.cfg.Stored != nil {
		r.cfg.Stored(t)
	}
	return nil
}

// count adds one to a count of r.stats.
func (r *Receiver) count(n *int64) {
	r.mu.Lock()
	*n++
	r.mu.Unlock()
}

// hash identifies a trace's content by its spans' ids and end times, so that
// a trace sent again unchanged is not stored again.
func (ot *openTrace) hash() string {
	keys := make([]string, len(ot.spans))
	for i, s := range ot.spans {
		keys[i] = s.SpanID.String() + strconv.FormatInt(s.End.UnixNano(), 10)
	}
	slices.Sort(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
	}
	return hex.EncodeToString(h.Sum(nil))
}
