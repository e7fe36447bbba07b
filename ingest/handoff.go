package ingest

import (
	"context"
	"errors"
	"sync"

	"github.com/faultline/faultline/trace"
)

// handoffMax is the size (bytes of text and arguments) above which a trace
// is not handed off but taken in turn, once the one before it is stored:
// so that two large traces are never held at once besides the one being
// decoded.
const handoffMax = 8 << 20

// handoff gives a file's traces to its sink on a goroutine of its own,
// while the decoder reads the next one: decoding on one core, the sink's
// work (detectors, the store's writes) on the other, where one goroutine
// did both in turn. At most one trace waits. The sink sees the traces one
// at a time and in order, as before; a trace it refuses is counted and
// reported from that goroutine, and any other error stops the file at the
// decoder's next trace.
type handoff struct {
	w       *walker
	ctx     context.Context
	fs      FileSink
	display string
	queue   chan *trace.Trace
	pending sync.WaitGroup // traces handed off and not yet stored
	done    chan struct{}
	err     error // why the sink stopped the file; guarded by w.mu
}

func (w *walker) handoff(ctx context.Context, fs FileSink, display string) *handoff {
	h := &handoff{w: w, ctx: ctx, fs: fs, display: display, queue: make(chan *trace.Trace, 1), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for t := range h.queue {
			if h.failed() == nil {
				h.store(t)
			}
			h.pending.Done()
		}
	}()
	return h
}

// trace hands a decoded trace on, or stores a large one itself once the
// traces before it are stored. It returns why the sink stopped the file,
// if it has.
func (h *handoff) trace(t *trace.Trace) error {
	if err := h.failed(); err != nil {
		return err
	}
	if textSize(t) > handoffMax {
		h.pending.Wait()
		if err := h.failed(); err != nil {
			return err
		}
		h.store(t)
		return h.failed()
	}
	h.pending.Add(1)
	select {
	case h.queue <- t:
		return nil
	case <-h.ctx.Done():
		h.pending.Done()
		return h.ctx.Err()
	}
}

// wait returns once every trace handed off is stored, with why the sink
// stopped the file, if it has.
func (h *handoff) wait() error {
	close(h.queue)
	<-h.done
	return h.failed()
}

// store gives one trace to the sink and counts it. A refused trace is
// declined alone; the rest of the file is still read.
func (h *handoff) store(t *trace.Trace) {
	err := h.fs.Trace(h.ctx, t)
	w := h.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if errors.Is(err, ErrRefused) {
		w.sum.Refused++
		w.reportLocked(Issue{Path: h.display, Severity: Error, Message: err.Error()})
		return
	}
	w.sum.Traces++
	if err != nil && h.err == nil {
		h.err = err
	}
}

func (h *handoff) failed() error {
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	return h.err
}

// textSize is what a trace's steps hold of text and arguments, the bulk of
// its memory.
func textSize(t *trace.Trace) int {
	n := 0
	for i := range t.Steps {
		n += len(t.Steps[i].Text) + len(t.Steps[i].Args)
	}
	return n
}
