package guardproxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/faultline/faultline/guard"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

// Source is the source of the findings a guard's run is stored with.
const Source = "guard"

// record counts a session's new decisions, writes them to the decision
// log, queues them for the OTLP endpoint, and stores the session's run when it ended or has made SaveEvery
// decisions since last stored.
func (p *Proxy) record(e *entry, ds []guard.Decision) {
	if len(ds) == 0 {
		return
	}
	p.stats.count(ds)
	if p.log != nil {
		if err := p.log.write(ds); err != nil {
			p.cfg.Log.Error("writing decisions", "err", err)
		}
	}
	if p.otlp != nil {
		p.exportDecisions(e, ds)
	}
	e.unsaved += len(ds)
	if e.unsaved >= p.cfg.SaveEvery || slices.ContainsFunc(ds, func(d guard.Decision) bool { return d.Action == guard.Block }) {
		p.save(e)
	}
}

// save stores the session's run as it stands; the caller holds its lock.
func (p *Proxy) save(e *entry) {
	if p.saver == nil {
		return
	}
	if t := e.run(); t != nil {
		e.unsaved = 0
		p.saver.put(saveJob{t: t})
	}
}

// evicted stores the run of a session the table evicted. The session may
// be in use still, so its run is taken under its lock, by the saver.
func (p *Proxy) evicted(e *entry) {
	if p.saver != nil {
		p.saver.put(saveJob{e: e})
	}
}

// run is the session's run as a trace of format "guard" whose findings are
// its decisions. The caller holds the entry's lock.
func (e *entry) run() *trace.Trace {
	if e.s == nil {
		return nil
	}
	t := &trace.Trace{
		ID: e.s.ID, Format: "guard", Source: "guard:" + e.key,
		Model: e.start.Model, Task: e.start.Task, System: e.start.System,
		Started: e.began, Ended: time.Now(),
		Steps: slices.Clone(e.s.Steps()),
	}
	for _, d := range e.s.Decisions() {
		t.Findings = append(t.Findings, finding(d))
	}
	if d := e.s.Ended(); d != nil {
		t.SetMeta("guard_blocked_by", d.Rule)
	}
	return t
}

// finding is a decision as a finding: at the steps it cites (or at the step
// it was made at), its explanation naming the rule and action.
func finding(d guard.Decision) trace.Finding {
	steps := d.Steps
	if len(steps) == 0 && d.Step >= 0 {
		steps = []int{d.Step}
	}
	return trace.Finding{
		Mode: d.Mode, Source: Source, Verdict: trace.Present, Detector: d.Detector,
		Steps: steps, Quote: d.Quote,
		Explanation: fmt.Sprintf("%s (%s): %s", d.Rule, d.Action, d.Explanation),
	}
}

// decisionLog writes decisions as JSON lines.
type decisionLog struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *decisionLog) write(ds []guard.Decision) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	enc := json.NewEncoder(l.w)
	for _, d := range ds {
		if err := enc.Encode(d); err != nil {
			return fmt.Errorf("decision log: %w", err)
		}
	}
	return nil
}

// saveJob is a run to store, or a session whose run the saver takes.
type saveJob struct {
	t *trace.Trace
	e *entry
}

// saver stores runs one at a time, in the background: a request does not
// wait for the store. Its queue is unbounded (one run per session at
// most, in the main) so that putting never waits on the saver, which may
// itself wait for a session's lock.
type saver struct {
	sink ingest.Sink
	log  *slog.Logger

	mu     sync.Mutex
	queue  []saveJob
	closed bool
	wake   chan struct{}
	done   chan struct{}
}

func startSaver(sink ingest.Sink, log *slog.Logger) *saver {
	s := &saver{sink: sink, log: log, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go s.loop()
	return s
}

func (s *saver) put(j saveJob) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.log.Warn("guard run not stored: the proxy is closed")
		return
	}
	s.queue = append(s.queue, j)
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// close stores what is queued and stops, or gives up when ctx ends.
func (s *saver) close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("storing the guard's runs: %w", ctx.Err())
	}
}

func (s *saver) loop() {
	defer close(s.done)
	for range s.wake {
		for {
			s.mu.Lock()
			if len(s.queue) == 0 {
				closed := s.closed
				s.mu.Unlock()
				if closed {
					return
				}
				break
			}
			j := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			s.store(j)
		}
	}
}

// store writes one run, as the file "guard:<id>" whose content is the run
// so far: a longer version of it replaces the one stored.
func (s *saver) store(j saveJob) {
	t := j.t
	if t == nil {
		j.e.mu.Lock()
		t = j.e.run()
		j.e.mu.Unlock()
		if t == nil {
			return
		}
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%d steps %d findings", len(t.Steps), len(t.Findings)))
	info := ingest.FileInfo{Path: t.ID, Hash: hex.EncodeToString(sum[:]), Format: t.Format}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := ingest.StoreFile(ctx, s.sink, info, t); err != nil {
		level := slog.LevelError
		if errors.Is(err, ingest.ErrRefused) {
			level = slog.LevelWarn
		}
		s.log.Log(ctx, level, "guard run not stored", "trace", t.ID, "steps", len(t.Steps), "err", err)
	}
}
