package judgequeue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"

	"github.com/faultline/faultline/internal/judge"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// Store is what a worker needs from the database: the judge's reads and
// cache, the connection pool River shares, and the judgement's write in a
// transaction of the worker's (*postgres.Store).
type Store interface {
	judge.Store
	DB() *sql.DB
	PutJudgementTx(ctx context.Context, tx *sql.Tx, r store.JudgeRecord, findings []trace.Finding) error
}

// WorkerOptions configure a worker process.
type WorkerOptions struct {
	// Concurrency is how many jobs the worker runs at once.
	Concurrency int
	// Timeout bounds one call to the endpoint.
	Timeout time.Duration
	// JobTimeout bounds one job; a job still running after it is cancelled
	// and retried. A job whose worker died is taken up again by another
	// some time after JobTimeout (River's rescuer looks every 30 seconds).
	JobTimeout time.Duration
	// MinBackoff and MaxBackoff bound the pause before a job's next
	// attempt.
	MinBackoff, MaxBackoff time.Duration
	// PollInterval is how often an idle worker looks for jobs.
	PollInterval time.Duration
	// APIKey returns the key for a job whose endpoint names the variable
	// envName (empty: the default variables), and where it came from.
	APIKey func(envName string) (key, from string)
	// UntilEmpty makes Run return once no job is queued, waiting for a
	// retry or running, rather than wait for more.
	UntilEmpty bool
	Log        *slog.Logger
}

// Worker defaults.
const (
	DefaultConcurrency  = 4
	DefaultJobTimeout   = 30 * time.Minute
	DefaultPollInterval = time.Second
	DefaultMinBackoff   = 2 * time.Second
	DefaultMaxBackoff   = 5 * time.Minute
)

// rescueMargin is how long past JobTimeout a running job must go without
// finishing before it is taken for one whose worker died. A slow worker
// whose job is taken all the same stores nothing (see complete).
const rescueMargin = 10 * time.Second

// Worker judges queued traces.
type Worker struct {
	st     Store
	opt    WorkerOptions
	limit  sharedLimit
	client *river.Client[*sql.Tx]
	policy backoff
	pauses pauses

	mu      sync.Mutex
	clients map[Endpoint]*judge.OpenAI
	toks    map[string]*judge.Tokenizer
	stats   Stats
}

// Stats count the jobs a worker finished.
type Stats struct {
	Done   int `json:"done"`   // judged, skipped or found judged
	Failed int `json:"failed"` // recorded as failed after the last attempt
	Calls  int `json:"calls"`
}

// Stats returns the worker's counts so far.
func (w *Worker) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// NewWorker sets up the queue's tables and a worker on them.
func NewWorker(ctx context.Context, st Store, opt WorkerOptions) (*Worker, error) {
	if opt.Concurrency <= 0 {
		opt.Concurrency = DefaultConcurrency
	}
	if opt.JobTimeout <= 0 {
		opt.JobTimeout = DefaultJobTimeout
	}
	if opt.PollInterval <= 0 {
		opt.PollInterval = DefaultPollInterval
	}
	if opt.MinBackoff <= 0 {
		opt.MinBackoff = DefaultMinBackoff
	}
	if opt.MaxBackoff < opt.MinBackoff {
		opt.MaxBackoff = max(DefaultMaxBackoff, opt.MinBackoff)
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.APIKey == nil {
		opt.APIKey = func(string) (string, string) { return "", "" }
	}
	if err := Setup(ctx, st.DB()); err != nil {
		return nil, err
	}
	w := &Worker{st: st, opt: opt, limit: sharedLimit{st.DB()}, policy: backoff{min: opt.MinBackoff, max: opt.MaxBackoff},
		clients: map[Endpoint]*judge.OpenAI{}, toks: map[string]*judge.Tokenizer{}}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &jobWorker{w: w}); err != nil {
		return nil, fmt.Errorf("job queue worker: %w", err)
	}
	client, err := river.NewClient(riverdatabasesql.New(st.DB()), &river.Config{
		Queues:               map[string]river.QueueConfig{QueueName: {MaxWorkers: opt.Concurrency}},
		Workers:              workers,
		JobTimeout:           opt.JobTimeout,
		RescueStuckJobsAfter: opt.JobTimeout + rescueMargin,
		// database/sql gives River no LISTEN, so workers poll for jobs.
		PollOnly:          true,
		FetchPollInterval: opt.PollInterval,
		// A slot freed by a finished job is filled after at most this
		// pause (River's default, 100ms, is half a fast call).
		FetchCooldown: min(max(opt.PollInterval/10, 10*time.Millisecond), opt.PollInterval),
		RetryPolicy:   w.policy,
		// Finished jobs are what --status counts; keep them a month.
		CompletedJobRetentionPeriod: 30 * 24 * time.Hour,
		DiscardedJobRetentionPeriod: 30 * 24 * time.Hour,
		Logger:                      opt.Log,
	})
	if err != nil {
		return nil, fmt.Errorf("job queue client: %w", err)
	}
	w.client = client
	return w, nil
}

// Run works jobs until ctx is done (or, with UntilEmpty, until none is
// left), then stops taking new ones and waits for those running to
// finish, at most grace; past it, they are cancelled and will be retried.
func (w *Worker) Run(ctx context.Context, grace time.Duration) error {
	// The client runs on a context of its own: ctx ending means "stop taking
	// jobs", not "abandon those half done".
	runCtx, cancelRun := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRun()
	if err := w.client.Start(runCtx); err != nil {
		return fmt.Errorf("starting the job queue worker: %w", err)
	}
	var runErr error
	if w.opt.UntilEmpty {
		runErr = w.waitEmpty(ctx)
	} else {
		<-ctx.Done()
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	if err := w.client.Stop(stopCtx); err != nil {
		w.opt.Log.Warn("jobs still running at the end of the grace period are cancelled; they will be retried", "err", err)
		hard, cancelHard := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancelHard()
		if err := w.client.StopAndCancel(hard); err != nil {
			return fmt.Errorf("stopping the job queue worker: %w", err)
		}
	}
	return runErr
}

// waitEmpty returns once no judge job is left unfinished, or ctx is done.
func (w *Worker) waitEmpty(ctx context.Context) error {
	tick := time.NewTicker(max(w.opt.PollInterval, 200*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		var left int
		err := w.st.DB().QueryRowContext(ctx, `SELECT count(*) FROM river_job WHERE kind = $1
			AND state IN ('available', 'pending', 'running', 'retryable', 'scheduled')`, Kind).Scan(&left)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("counting the judge jobs left: %w", err)
		}
		if left == 0 {
			return nil
		}
	}
}

// client returns the worker's client of an endpoint, made once: its
// connections and response-format fallback serve all the endpoint's jobs.
// It makes one attempt per call: the queue retries the job instead, with
// its backoff kept in the database, after any pause the endpoint asked for
// (see pauses).
func (w *Worker) endpointClient(ep Endpoint) (*judge.OpenAI, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := ep
	key.Price = nil // not a client setting, and a pointer
	if c, ok := w.clients[key]; ok {
		return c, nil
	}
	format, err := judge.ParseFormat(ep.Format)
	if err != nil {
		return nil, err
	}
	apiKey, _ := w.opt.APIKey(ep.APIKeyEnv)
	c := judge.NewOpenAI(judge.ClientOptions{
		BaseURL: ep.BaseURL, APIKey: apiKey, Format: format, Timeout: w.opt.Timeout, Retries: 0,
		Conns: w.opt.Concurrency, Log: w.opt.Log,
	})
	w.clients[key] = c
	return c, nil
}

func (w *Worker) tokenizer(encoding string) (*judge.Tokenizer, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.toks[encoding]; ok {
		return t, nil
	}
	t, err := judge.NewTokenizer(encoding)
	if err != nil {
		return nil, err
	}
	w.toks[encoding] = t
	return t, nil
}

// Output is what a finished job records in River's metadata, for --status.
type Output struct {
	// Status is the trace's judge status (ok, failed, skipped), or
	// "already" when it was found judged with the same prompt.
	Status       string   `json:"status"`
	Calls        int      `json:"calls"`
	Cached       int      `json:"cached"`
	InputTokens  int      `json:"input_tokens"`
	OutputTokens int      `json:"output_tokens"`
	Cost         *float64 `json:"cost,omitempty"`
	Error        string   `json:"error,omitempty"`
}

// StatusAlready is Output.Status of a job whose trace was found judged.
const StatusAlready = "already"

// jobWorker is River's worker of Args.
type jobWorker struct {
	river.WorkerDefaults[Args]
	w *Worker
}

// NextRetry is when a job whose attempt failed is tried again: River's
// retry policy's time, or later when the endpoint asked for a longer pause
// (see pauses).
func (j *jobWorker) NextRetry(job *river.Job[Args]) time.Time {
	return j.w.pauses.nextRetry(job.JobRow, j.w.policy, time.Now())
}

// errSuperseded: the job was taken from this worker (it ran past the
// rescue time) and given to another, whose judgement counts.
var errSuperseded = errors.New("the job was handed to another worker meanwhile; its judgement is not stored")

// Work judges one trace. The judge writes its answers to the cache as it
// gets them (a retry makes no call already answered), but its judgement
// is captured rather than stored, and stored with the job's completion.
// A failure the endpoint may get past is returned, for River to retry the
// job; the last attempt's failure is recorded on the trace, once.
func (j *jobWorker) Work(ctx context.Context, job *river.Job[Args]) error {
	w, a := j.w, job.Args
	log := w.opt.Log.With("trace", a.Trace, "job", job.ID, "attempt", job.Attempt)
	last := job.Attempt >= job.MaxAttempts
	opt := a.Options()
	opt.Log = log
	if v := judge.PromptVersion(opt.Render); v != a.PromptVersion {
		return fmt.Errorf("the job asks for prompt %s; this faultline writes %s: run workers of the enqueuer's version", a.PromptVersion, v)
	}
	client, err := w.endpointClient(a.Endpoint)
	if err != nil {
		return err
	}
	tok, err := w.tokenizer(a.Params.Encoding)
	if err != nil {
		return err
	}
	be := &limited{backend: client, limit: w.limit, endpoint: endpointKey(a.Endpoint.BaseURL), rpm: a.Endpoint.RequestsPerMinute}
	held := &capture{Store: w.st}
	runner := judge.NewRunner(be, held, tok, opt)
	runErr := runner.Run(ctx, []string{a.Trace})
	p := runner.Progress()
	out := Output{Calls: p.Calls, Cached: p.CachedCalls, InputTokens: p.InputTokens, OutputTokens: p.OutputTokens, Cost: p.Cost}
	rec, findings := held.rec, held.findings
	switch {
	case runErr != nil && errors.Is(ctx.Err(), context.Canceled):
		// The worker is stopping: the job goes back to the queue without
		// spending an attempt.
		return river.JobSnooze(w.opt.MinBackoff)
	case runErr != nil && !last:
		// Past the job's time limit, or what stops an in-process run (a
		// refusing endpoint, a database error): another attempt may do.
		w.pauses.note(job.ID, be.lastErr)
		return fmt.Errorf("judging trace %s: %w", a.Trace, runErr)
	case runErr != nil:
		// The last attempt failed too: record the failure on the trace.
		rec = &store.JudgeRecord{Trace: a.Trace, Source: judge.Source(a.Model), PromptVersion: a.PromptVersion, Samples: a.Params.Samples,
			Status: judge.StatusFailed, Error: runErr.Error(), Calls: p.Calls, InputTokens: p.InputTokens, OutputTokens: p.OutputTokens,
			Cost: p.Cost, JudgedAt: time.Now().UTC()}
		findings = nil
	case rec == nil:
		out.Status = StatusAlready
	case rec.Status == judge.StatusFailed && Transient(be.lastErr) && !last:
		log.Warn("judging failed; the job will be retried", "err", rec.Error)
		w.pauses.note(job.ID, be.lastErr)
		return fmt.Errorf("judging trace %s (attempt %d of %d): %s", a.Trace, job.Attempt, job.MaxAttempts, rec.Error)
	}
	if rec != nil {
		out.Status, out.Error = rec.Status, rec.Error
		if job.Attempt > 1 && rec.Status == judge.StatusFailed {
			rec.Error = fmt.Sprintf("after %d attempts: %s", job.Attempt, rec.Error)
			out.Error = rec.Error
		}
	}
	if ctx.Err() != nil {
		// Past the job's time limit, the failure is still recorded.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
	}
	return w.complete(ctx, job, rec, findings, out)
}

// complete stores the judgement (if any) and completes the job in one
// transaction: both or neither. The job's row is locked first and must
// still be this attempt's: a worker that lost its job to the rescuer
// stores nothing, so a trace is never stored twice from one job.
func (w *Worker) complete(ctx context.Context, job *river.Job[Args], rec *store.JudgeRecord, findings []trace.Finding, out Output) error {
	if err := river.RecordOutput(ctx, out); err != nil {
		return fmt.Errorf("recording the job's output: %w", err)
	}
	tx, err := w.st.DB().BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storing the judgement of %s: %w", job.Args.Trace, err)
	}
	defer tx.Rollback()
	var one int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM river_job WHERE id = $1 AND attempt = $2 AND state = 'running' FOR UPDATE`, job.ID, job.Attempt).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return errSuperseded
	case err != nil:
		return fmt.Errorf("locking judge job %d: %w", job.ID, err)
	}
	if rec != nil {
		if err := w.st.PutJudgementTx(ctx, tx, *rec, findings); err != nil {
			return fmt.Errorf("storing the judgement of %s: %w", job.Args.Trace, err)
		}
	}
	if _, err := river.JobCompleteTx[*riverdatabasesql.Driver](ctx, tx, job); err != nil {
		return fmt.Errorf("completing judge job %d: %w", job.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storing the judgement of %s: %w", job.Args.Trace, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if out.Status == judge.StatusFailed {
		w.stats.Failed++
	} else {
		w.stats.Done++
	}
	w.stats.Calls += out.Calls
	return nil
}

// endpointKey names an endpoint for the shared rate limit: its API root,
// however it was written.
func endpointKey(baseURL string) string {
	return strings.TrimSuffix(strings.TrimRight(baseURL, "/"), "/chat/completions")
}

// capture is the store a job's runner writes its judgement to: reads and
// the cache go to the database, the judgement is held for the job's
// transaction.
type capture struct {
	Store
	rec      *store.JudgeRecord
	findings []trace.Finding
}

func (c *capture) PutJudgement(_ context.Context, r store.JudgeRecord, findings []trace.Finding) error {
	c.rec, c.findings = &r, findings
	return nil
}
