package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/faultline/faultline/internal/synth"

	_ "modernc.org/sqlite" // the database is read directly for the checks
)

// config says what a soak runs and for how long.
type config struct {
	Faultline string        // the faultline binary
	Dir       string        // scratch directory
	Duration  time.Duration // how long the load runs
	KillEvery time.Duration // mean time between two kills
	Seed      uint64
	MaxTraces int       // most traces posted to the receiver
	Progress  io.Writer // a line per event worth knowing; nil for none
}

// receiverArgs run the receiver in durable mode: each request is written to
// the spool and synced before it is acknowledged, so a kill loses nothing
// acknowledged. The short root wait stores traces soon after they arrive.
func receiverArgs(spool string) []string {
	return []string{"receive", "--spool", spool, "--root-wait", "200ms"}
}

// soaker is one run: the processes, the clients and what they saw.
type soaker struct {
	cfg      config
	db       string
	ingested string // the directory the ingests read
	rng      *rand.Rand
	rngMu    sync.Mutex
	fig      *figures

	receiverURL, webURL string

	mu       sync.Mutex
	receiver *process // nil while restarting
	ingest   *process // nil between runs
	stopping bool     // the load is over: the supervisors stop restarting
	// acked maps each acknowledged trace to its late spans acknowledged;
	// lateTried, to those sent, acknowledged or not.
	acked, lateTried map[string]int
	// labels maps each trace to the note of the last label saved on it.
	labels map[string]string
	// unanswered is the label whose save the end of the load cut short,
	// on its trace: the server may have stored it or not.
	unanswered struct{ id, note string }
	// corpus maps each generated trace to its step count.
	corpus map[string]int
}

// soak runs the load for cfg.Duration, stops everything and checks the
// database. An error means the soak itself could not run.
func soak(ctx context.Context, cfg config) (*figures, error) {
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	s := &soaker{
		cfg:       cfg,
		db:        filepath.Join(cfg.Dir, "soak.db"),
		ingested:  filepath.Join(cfg.Dir, "traces"),
		rng:       rand.New(rand.NewPCG(cfg.Seed, 0x50a4)),
		fig:       &figures{Duration: cfg.Duration, Seed: cfg.Seed},
		acked:     map[string]int{},
		lateTried: map[string]int{},
		labels:    map[string]string{},
		corpus:    map[string]int{},
	}
	receivePort, err := freePort()
	if err != nil {
		return nil, err
	}
	webPort, err := freePort()
	if err != nil {
		return nil, err
	}
	s.receiverURL = fmt.Sprintf("http://127.0.0.1:%d/v1/traces", receivePort)
	s.webURL = fmt.Sprintf("http://127.0.0.1:%d", webPort)

	// Traces to label from the start: the first corpus, ingested whole.
	if err := s.addCorpus(0); err != nil {
		return nil, err
	}
	if out, err := exec.CommandContext(ctx, cfg.Faultline, "--db", s.db, "-q", "ingest", s.ingested).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("first ingest: %w: %s", err, out)
	}
	web, err := s.start("serve", "serve", "--addr", fmt.Sprintf("127.0.0.1:%d", webPort))
	if err != nil {
		return nil, err
	}
	defer web.stop()
	if err := waitListening(ctx, s.webURL+"/count"); err != nil {
		return nil, fmt.Errorf("the web UI did not come up (see %s): %w", web.log, err)
	}

	load, endLoad := context.WithTimeout(ctx, cfg.Duration)
	defer endLoad()
	var supervisors, clients sync.WaitGroup
	supervisors.Go(func() { s.superviseReceiver(receivePort) })
	supervisors.Go(func() { s.ingestRounds(load) })
	clients.Go(func() { s.killer(load) })
	late := newLateSpans()
	for range 2 {
		clients.Go(func() { s.sendTraces(load, late) })
	}
	clients.Go(func() { s.sendLateSpans(load, late) })
	clients.Go(func() { s.saveLabels(load) })
	clients.Go(func() { s.readPages(load) })
	clients.Wait()
	fmt.Fprintf(cfg.Progress, "load over after %s: stopping the receiver and the ingest\n", cfg.Duration)

	s.mu.Lock()
	s.stopping = true
	receiver := s.receiver
	s.mu.Unlock()
	if receiver != nil {
		// Ctrl-C, once it listens (it may have just been started): the
		// receiver stores every trace whose root arrived.
		waitListening(ctx, s.receiverURL)
		receiver.cmd.Process.Signal(os.Interrupt)
	}
	supervisors.Wait()
	if s.fig.ReceiverExit != "" {
		return s.fig, fmt.Errorf("the receiver failed to stop on Ctrl-C: %s (see %s)", s.fig.ReceiverExit, filepath.Join(cfg.Dir, "receive.log"))
	}
	// A last ingest, not killed, completes what the killed ones left.
	if out, err := exec.CommandContext(ctx, cfg.Faultline, "--db", s.db, "-q", "ingest", s.ingested).CombinedOutput(); err != nil {
		s.fig.IngestErrors = append(s.fig.IngestErrors, fmt.Sprintf("last ingest: %v: %s", err, out))
	}
	web.stop()
	return s.fig, s.check(ctx)
}

// process is a faultline command running in the background.
type process struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // once done
}

// start runs faultline with args on the soak's database, its stderr and
// stdout appended to name.log.
func (s *soaker) start(name string, args ...string) (*process, error) {
	logPath := filepath.Join(s.cfg.Dir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(s.cfg.Faultline, append([]string{"--db", s.db}, args...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting faultline %s: %w", name, err)
	}
	p := &process{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// stop interrupts the process and waits for it.
func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// killed says whether the process ended by SIGKILL.
func (p *process) killed() bool {
	var exit *exec.ExitError
	if !errors.As(p.err, &exit) {
		return false
	}
	status, ok := exit.Sys().(syscall.WaitStatus)
	return ok && status.Signaled() && status.Signal() == syscall.SIGKILL
}

// track holds p in slot (for the killer to find) until it ends.
func (s *soaker) track(slot **process, p *process) {
	s.mu.Lock()
	*slot = p
	s.mu.Unlock()
	<-p.done
	s.mu.Lock()
	*slot = nil
	s.mu.Unlock()
}

// superviseReceiver keeps a receiver running on port until the load is
// over, starting a new one (on the same spool) after each kill.
func (s *soaker) superviseReceiver(port int) {
	spool := filepath.Join(s.cfg.Dir, "spool")
	for {
		p, err := s.start("receive", append(receiverArgs(spool), "--addr", fmt.Sprintf("127.0.0.1:%d", port))...)
		if err != nil {
			s.fig.ReceiverExit = err.Error()
			return
		}
		s.track(&s.receiver, p)
		s.mu.Lock()
		stopping := s.stopping
		s.mu.Unlock()
		switch {
		case p.killed():
			fmt.Fprintf(s.cfg.Progress, "receiver killed; starting another on the same spool\n")
		case stopping && p.err == nil:
			return
		default:
			// Neither killed nor asked to stop: a failure of its own.
			s.fig.ReceiverExit = fmt.Sprintf("exited by itself: %v", p.err)
			if stopping {
				return
			}
		}
		if stopping {
			// Killed just as the load ended: one more start replays the
			// spool, and the loop stops it.
			go func() {
				waitListening(context.Background(), s.receiverURL)
				s.mu.Lock()
				if s.receiver != nil {
					s.receiver.cmd.Process.Signal(os.Interrupt)
				}
				s.mu.Unlock()
			}()
		}
	}
}

// ingestRounds runs ingest after ingest over a directory that grows by a
// generated corpus each round, until the load is over.
func (s *soaker) ingestRounds(ctx context.Context) {
	for round := 1; ctx.Err() == nil; round++ {
		// New traces for the first rounds; afterwards the same files, which
		// a completed ingest skips and a killed one left to read again.
		if round <= 40 {
			if err := s.addCorpus(round); err != nil {
				s.fig.IngestErrors = append(s.fig.IngestErrors, err.Error())
				return
			}
		}
		p, err := s.start("ingest", "-q", "ingest", s.ingested)
		if err != nil {
			s.fig.IngestErrors = append(s.fig.IngestErrors, err.Error())
			return
		}
		s.track(&s.ingest, p)
		s.fig.IngestRuns++
		if p.err != nil && !p.killed() {
			s.fig.IngestErrors = append(s.fig.IngestErrors, fmt.Sprintf("ingest run %d: %v (see %s)", s.fig.IngestRuns, p.err, p.log))
		}
	}
}

// addCorpus writes a generated corpus of its own seed into the ingested
// directory and notes its traces.
func (s *soaker) addCorpus(round int) error {
	c, err := synth.Generate(synth.Options{Seed: s.cfg.Seed + uint64(round), Traces: synth.DefaultTraces})
	if err != nil {
		return err
	}
	dir := filepath.Join(s.ingested, fmt.Sprintf("round-%03d", round))
	files, m := c.Files()
	for _, tr := range m.Traces {
		path := filepath.Join(dir, filepath.FromSlash(tr.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, files[tr.Path], 0o644); err != nil {
			return err
		}
		s.mu.Lock()
		s.corpus[tr.ID] = tr.Steps
		s.mu.Unlock()
	}
	return nil
}

// killer kills the receiver or the running ingest, at random, every
// KillEvery on average.
func (s *soaker) killer(ctx context.Context) {
	for {
		s.rngMu.Lock()
		pause := time.Duration((0.5 + s.rng.Float64()) * float64(s.cfg.KillEvery))
		receiver := s.rng.IntN(2) == 0
		s.rngMu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		s.mu.Lock()
		target, count := s.ingest, &s.fig.IngestKills
		if receiver {
			target, count = s.receiver, &s.fig.ReceiverKills
		}
		if target != nil && target.cmd.Process.Kill() == nil {
			*count++
		}
		s.mu.Unlock()
	}
}

// freePort is a loopback port nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitListening waits up to 10 seconds for url to answer.
func waitListening(ctx context.Context, url string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := httpGet(ctx, url)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// check reads the database once every process has stopped.
func (s *soaker) check(ctx context.Context) error {
	db, err := sql.Open("sqlite", "file:"+s.db)
	if err != nil {
		return err
	}
	defer db.Close()
	f := s.fig
	steps := map[string]int{}
	rows, err := db.QueryContext(ctx, `SELECT id, step_count FROM traces`)
	if err != nil {
		return fmt.Errorf("reading the stored traces: %w", err)
	}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return err
		}
		steps[id] = n
	}
	if err := rows.Close(); err != nil {
		return err
	}

	// Received traces: each stored, with the steps of its late spans
	// acknowledged, and of none not sent (a late span sent but not answered
	// may or may not be in).
	f.Acked = len(s.acked)
	for id, lateAcked := range s.acked {
		n, ok := steps[id]
		least, most := receivedSteps+lateAcked*lateSpanSteps, receivedSteps+s.lateTried[id]*lateSpanSteps
		switch {
		case !ok:
			f.lost("acknowledged trace %s is not stored", id)
		case n < least || n > most:
			f.lost("trace %s stored with %d steps, not %d (%d late spans acknowledged, %d sent)", id, n, least, lateAcked, s.lateTried[id])
		default:
			f.AckedStored++
			if lateAcked > 0 {
				f.WithLate++
			}
		}
	}

	// Ingested traces: each stored whole.
	f.Generated = len(s.corpus)
	for id, want := range s.corpus {
		switch n, ok := steps[id]; {
		case !ok:
			f.lost("ingested trace %s is not stored", id)
		case n != want:
			f.lost("ingested trace %s stored with %d steps, not %d", id, n, want)
		default:
			f.GeneratedStored++
		}
	}
	var halfStored int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM traces t WHERE t.step_count <> (SELECT COUNT(*) FROM steps s WHERE s.trace_id = t.id)`).Scan(&halfStored); err != nil {
		return err
	}
	if halfStored > 0 {
		f.lost("%d traces hold fewer or more steps than their step count", halfStored)
	}

	// Labels: the last one saved on each trace.
	f.LabelTraces = len(s.labels)
	for id, note := range s.labels {
		var got string
		err := db.QueryRowContext(ctx, `SELECT explanation FROM findings WHERE trace_id = ? AND source = 'human:soak' AND mode = 'FM-1.1'`, id).Scan(&got)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			f.lost("the label saved on %s (%q) is not stored", id, note)
		case err != nil:
			return err
		case got != note && (got != s.unanswered.note || id != s.unanswered.id):
			f.lost("the label stored on %s is %q, not the last saved, %q", id, got, note)
		default:
			f.LabelsStored++
		}
	}

	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&f.Integrity); err != nil {
		return err
	}
	if f.Integrity != "ok" {
		f.lost("integrity_check: %s", f.Integrity)
	}
	// The search index checks itself against its own structures; then it
	// must hold a row for every step.
	f.SearchIndex = "ok"
	if _, err := db.ExecContext(ctx, `INSERT INTO steps_fts (steps_fts) VALUES ('integrity-check')`); err != nil {
		f.SearchIndex = err.Error()
		f.lost("search index: %v", err)
	}
	if err := db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM steps), (SELECT COUNT(*) FROM steps_fts)`).Scan(&f.Steps, &f.Indexed); err != nil {
		return err
	}
	if f.Steps != f.Indexed {
		f.lost("%d steps stored, %d in the search index", f.Steps, f.Indexed)
	}
	return nil
}

// figures is what a soak saw and found.
type figures struct {
	Duration time.Duration
	Seed     uint64

	Posted, Acked, AckedStored, WithLate int
	LateAcked, Throttled, Unreachable    atomic.Int64
	ReceiverKills                        int
	ReceiverExit                         string
	Refused                              int
	PostErrors                           []string

	IngestRuns, IngestKills    int
	Generated, GeneratedStored int
	IngestErrors               []string

	LabelsSaved, PagesRead    atomic.Int64
	LabelTraces, LabelsStored int
	WebErrors                 []string

	Integrity, SearchIndex string
	Steps, Indexed         int

	problems []string
}

func (f *figures) lost(format string, args ...any) {
	f.problems = append(f.problems, fmt.Sprintf(format, args...))
}

// losses lists everything the soak found lost or wrong.
func (f *figures) losses() []string {
	out := append([]string(nil), f.problems...)
	if f.Refused > len(f.PostErrors) {
		out = append(out, fmt.Sprintf("receiver: %d requests refused, the first %d follow", f.Refused, len(f.PostErrors)))
	}
	for _, e := range f.PostErrors {
		out = append(out, "receiver: "+e)
	}
	if f.ReceiverExit != "" {
		out = append(out, "receiver: "+f.ReceiverExit)
	}
	for _, e := range f.IngestErrors {
		out = append(out, "ingest: "+e)
	}
	for _, e := range f.WebErrors {
		out = append(out, "web: "+e)
	}
	return out
}

func (f *figures) print(w io.Writer) {
	fmt.Fprintf(w, "soak of %s, seed %d\n", f.Duration, f.Seed)
	fmt.Fprintf(w, "receiver: %d traces acknowledged (%d with late spans, %d late spans acknowledged), %d stored; %d answers 429/503, %d posts unanswered; killed %d times\n",
		f.Acked, f.WithLate, f.LateAcked.Load(), f.AckedStored, f.Throttled.Load(), f.Unreachable.Load(), f.ReceiverKills)
	fmt.Fprintf(w, "ingest: %d runs, %d killed; %d traces in the files, %d stored whole\n",
		f.IngestRuns, f.IngestKills, f.Generated, f.GeneratedStored)
	fmt.Fprintf(w, "web: %d labels saved on %d traces, the last of each stored on %d; %d pages read, %d errors\n",
		f.LabelsSaved.Load(), f.LabelTraces, f.LabelsStored, f.PagesRead.Load(), len(f.WebErrors))
	fmt.Fprintf(w, "database: integrity_check %s; search index %s; %d steps, %d indexed\n", f.Integrity, f.SearchIndex, f.Steps, f.Indexed)
}
