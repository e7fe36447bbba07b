package receive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/faultline/faultline/detect"
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

// With Config.Commit, queued traces are written a group at a time and
// committed together: one commit then serves many small traces, where it
// was about half the cost of writing each. A group ends when the queue has no
// more, or it holds groupTraces traces or groupBytes of span content, or
// it has been written for groupTime (the write lock is held meanwhile, and
// what it holds is lost whole by a crash: at most that much, which stays
// queued, and spooled with a spool, until the commit).
const (
	groupTraces = 64
	groupBytes  = 8 << 20
)

// groupTime is counted from the group's first trace written (a variable
// for tests to lengthen).
var groupTime = 200 * time.Millisecond

// The queued traces are mapped (and detected, see Config.Detect) ahead of
// the store worker, by one goroutine per core, up to prepTraces traces or
// prepBytes of span content from the oldest: what that holds besides the
// spans is at most about as much again as those traces' spans.
const (
	prepTraces = 2 * groupTraces
	prepBytes  = 16 << 20
)

// prepared is a queued trace mapped ahead of the store worker.
type prepared struct {
	ot    *openTrace
	done  chan struct{} // closed once t and notes are set
	t     *trace.Trace
	notes []string
}

// prepare maps the traces sent on jobs until it is closed.
func (r *Receiver) prepare(jobs <-chan *prepared) {
	for p := range jobs {
		p.t, p.notes = r.mapTrace(p.ot)
		close(p.done)
	}
}

// ahead starts mapping the queued traces within prepTraces and prepBytes
// of the oldest that are not yet (the oldest always).
func (r *Receiver) ahead(jobs chan<- *prepared) {
	var start []*prepared
	r.mu.Lock()
	bytes := 0
	for i, ot := range r.queue[:min(len(r.queue), prepTraces)] {
		if bytes += ot.bytes; i > 0 && bytes > prepBytes {
			break
		}
		if ot.prep == nil && !ot.ifStored {
			ot.prep = &prepared{ot: ot, done: make(chan struct{})}
			start = append(start, ot.prep)
		}
	}
	r.mu.Unlock()
	for _, p := range start {
		jobs <- p
	}
}

// mapped returns ot mapped to a trace, with the notes of its mapping:
// mapped ahead (see ahead), or now. A trace is used once: Sink may add to
// it, so one tried again is mapped again.
func (r *Receiver) mapped(ot *openTrace) (*trace.Trace, []string) {
	if p := ot.prep; p != nil {
		ot.prep = nil
		<-p.done
		return p.t, p.notes
	}
	return r.mapTrace(ot)
}

// mapTrace maps ot's spans to a trace, nil when they hold no agent
// content, and runs Config.Detect on it.
func (r *Receiver) mapTrace(ot *openTrace) (*trace.Trace, []string) {
	t, notes := otel.Trace(ot.spans, ot.format, r.cfg.Source)
	if t == nil {
		return nil, notes
	}
	if !ot.root && !ot.late {
		t.SetMeta("otel.incomplete", "no root span within the idle timeout")
	}
	if r.cfg.Detect != nil {
		r.cfg.Detect(t)
	}
	return t, notes
}

// Detectors returns a Config.Detect that runs the detectors ds, adding
// their findings and the set's version (Trace.DetectedWith), as
// pipeline.Detecting does for the traces a sink takes; rejected findings
// go to onError.
func Detectors(ds []*detect.Detector, onError func(error)) func(*trace.Trace) {
	version := detect.Version(ds)
	return func(t *trace.Trace) {
		findings, errs := detect.Run(t, ds)
		for _, err := range errs {
			onError(err)
		}
		t.Findings = append(t.Findings, findings...)
		t.DetectedWith = version
	}
}

// signal wakes the store worker.
func (r *Receiver) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// waitQueued waits for a queued trace and returns the oldest; nil once the
// queue is closed and empty.
func (r *Receiver) waitQueued() *openTrace {
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

// queued returns the i-th queued trace, or nil when fewer are queued.
func (r *Receiver) queued(i int) *openTrace {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i < len(r.queue) {
		return r.queue[i]
	}
	return nil
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

// store maps, detects and stores the queued traces, oldest first, a group
// at a time (see groupTraces). A trace stays queued (and counted in the
// limits) until the store has committed it: a failed attempt is retried
// with backoff, and until one succeeds requests are refused with 503 (see
// storeDown). While the store fails, groups are of one trace, so that the
// failures are counted against the trace that meets them, which an error
// that is not transient gives up after attemptsOnFail. Once ctx is done
// (shutdown gave up waiting) what is still queued is counted lost.
func (r *Receiver) store(ctx context.Context, jobs chan<- *prepared) {
	wait, failures := retryFirst, 0
	for head := r.waitQueued(); head != nil; head = r.waitQueued() {
		limit := groupTraces
		if r.cfg.Commit == nil || failures > 0 {
			limit = 1
		}
		done, err := r.storeGroup(ctx, limit, jobs)
		if done > 0 {
			wait, failures = retryFirst, 0
			head = r.queued(0)
		}
		if err == nil {
			continue
		}
		failures++
		if ctx.Err() != nil || (!r.cfg.Transient(err) && failures >= attemptsOnFail) {
			r.lose(head, err)
			r.finish([]outcome{{ot: head, lost: true}})
			wait, failures = retryFirst, 0
			continue
		}
		r.mu.Lock()
		r.stats.StoreRetries++
		r.failing = time.Now().Add(wait)
		queued := len(r.queue)
		r.mu.Unlock()
		if failures == 1 || failures%10 == 0 {
			r.cfg.Log.Warn("the store failed; retrying, and refusing requests with 503 meanwhile", "trace", head.id.String(),
				"attempts", failures, "retry_in", wait.String(), "queued_traces", queued, "err", err)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
		wait = min(2*wait, retryMax)
	}
}

// storeGroup stores up to limit queued traces from the oldest, within
// groupBytes and groupTime, commits them, and takes them off the queue. It
// returns how many it took off, and why it stopped before the next one or
// why the commit failed (none taken off then).
func (r *Receiver) storeGroup(ctx context.Context, limit int, jobs chan<- *prepared) (int, error) {
	var group []outcome
	var werr error
	var began time.Time
	bytes := 0
	for len(group) < limit && bytes < groupBytes && (len(group) == 0 || time.Since(began) < groupTime) {
		ot := r.queued(len(group))
		if ot == nil {
			break
		}
		r.ahead(jobs)
		o, err := r.storeOne(ctx, ot)
		if err != nil {
			werr = err
			break
		}
		if len(group) == 0 {
			began = time.Now()
		}
		group = append(group, o)
		bytes += ot.bytes
	}
	if r.cfg.Commit != nil {
		// Even with nothing written: the commit reports, and clears, a
		// failure of the store's own since the last one.
		if err := r.cfg.Commit(ctx); err != nil {
			return 0, err
		}
	}
	r.finish(group)
	return len(group), werr
}

// outcome is what became of a queued trace, counted once it is committed.
type outcome struct {
	ot     *openTrace
	t      *trace.Trace // stored (merged, with merged), or nil: not stored
	merged bool
	added  int  // of a merge, the steps the late spans added
	lost   bool // given up (see lose)
}

// finish takes the group's traces, the oldest queued, off the queue and
// counts them.
func (r *Receiver) finish(group []outcome) {
	r.mu.Lock()
	if len(group) > 0 {
		r.failing = time.Time{}
	}
	for _, o := range group {
		switch {
		case o.lost:
		case o.t == nil:
			r.stats.NotStored++
		default:
			r.stats.Stored++
			if o.merged {
				r.stats.Merged++
			}
		}
		r.release(o.ot)
	}
	clear(r.queue[:len(group)]) // the queue's array holds them no more
	r.queue = r.queue[len(group):]
	r.mu.Unlock()
	for _, o := range group {
		if r.spool != nil {
			r.spool.done(o.ot.entries)
		}
		if o.t == nil {
			continue
		}
		if o.merged && o.added > 0 {
			id := o.t.ID
			r.cfg.Log.Info("late spans merged into the stored trace", "trace", id, "spans", len(o.ot.spans), "steps_added", o.added, "steps", len(o.t.Steps))
		}
		if r.cfg.Stored != nil {
			r.cfg.Stored(o.t)
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
// id, and says what became of it. An error means it may be tried again.
func (r *Receiver) storeOne(ctx context.Context, ot *openTrace) (outcome, error) {
	id := ot.id.String()
	if r.cfg.Loader != nil {
		stored, err := r.cfg.Loader.Load(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return outcome{}, err
		default:
			m, changed := merge(stored, ot.spans)
			if !changed && ot.wrote {
				// Written before in a group whose commit failed, after the
				// store had committed part of it: that write is what holds
				// the spans.
				return outcome{ot: ot, t: stored, merged: ot.wroteMerge}, nil
			}
			if !changed {
				r.cfg.Log.Info("spans of a stored trace arrived again: it holds them already, nothing to merge", "trace", id, "spans", len(ot.spans), "steps", len(stored.Steps))
				return outcome{ot: ot}, nil
			}
			ot.prep = nil // not of use: the late spans are mapped by merge
			if r.cfg.Detect != nil {
				r.cfg.Detect(m)
			}
			o, err := r.write(ctx, ot, m, true)
			o.added = len(m.Steps) - len(stored.Steps)
			return o, err
		}
	}
	if ot.ifStored {
		r.cutOff(ot)
		return outcome{ot: ot}, nil
	}
	t, notes := r.mapped(ot)
	for _, n := range notes {
		r.cfg.Log.Info("trace "+id+": "+n, "trace", id)
	}
	if t == nil {
		return outcome{ot: ot}, nil
	}
	if !ot.root && !ot.late {
		r.cfg.Log.Warn("trace stored without its root span after the idle timeout", "trace", id, "spans", len(ot.spans))
	}
	return r.write(ctx, ot, t, false)
}

// write hands a trace to the sink, as the file "otlp:<id>" whose content is
// ot's spans.
func (r *Receiver) write(ctx context.Context, ot *openTrace, t *trace.Trace, merged bool) (outcome, error) {
	info := ingest.FileInfo{Path: "otlp:" + t.ID, Hash: ot.hash(), Size: int64(ot.bytes), Format: ot.format}
	_, err := ingest.StoreFile(ctx, r.cfg.Sink, info, t)
	switch {
	case errors.Is(err, ingest.ErrRefused):
		// A fragment of a trace stored longer, with no Loader to merge it
		// into: the stored trace stays whole.
		r.cfg.Log.Warn("trace not stored: the sink refused it", "trace", t.ID, "spans", len(ot.spans), "err", err)
		return outcome{ot: ot}, nil
	case err != nil:
		return outcome{}, err
	}
	ot.wrote, ot.wroteMerge = true, merged
	return outcome{ot: ot, t: t, merged: merged}, nil
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
