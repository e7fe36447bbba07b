package judge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// Backend is an LLM endpoint that completes a chat. OpenAI is the one
// implementation; tests script their own.
type Backend interface {
	Complete(ctx context.Context, req Request) (*Response, error)
}

// ErrFatal marks a backend error that every further call would meet too (a
// bad key, an unknown model or URL): the run stops rather than recording
// the same failure on every trace.
var ErrFatal = errors.New("the endpoint refuses every request")

// Store is what a run needs from the database.
type Store interface {
	Load(ctx context.Context, id string) (*trace.Trace, error)
	// JudgeRecords returns the records of one source on the given traces.
	JudgeRecords(ctx context.Context, source string, ids []string) (map[string]store.JudgeRecord, error)
	// CachedAnswer returns the entry under key, or nil.
	CachedAnswer(ctx context.Context, key string) (*store.CacheEntry, error)
	PutCachedAnswer(ctx context.Context, e store.CacheEntry) error
	// PutJudgement replaces, in one transaction, the findings of r.Source on
	// r.Trace with findings and stores r.
	PutJudgement(ctx context.Context, r store.JudgeRecord, findings []trace.Finding) error
}

// Record statuses.
const (
	StatusOK     = "ok"
	StatusFailed = "failed"
	// StatusSkipped: the trace was not sent to the model because its
	// detector findings are system failures only (see SystemOnly). It has
	// no verdicts of the judge's, which is not the same as "no failure".
	StatusSkipped = "skipped"
)

// Source is the annotation source of a model's judgements.
func Source(model string) string { return "judge:" + model }

// Price is what a model costs, in dollars per million tokens.
type Price struct {
	Input  float64 `yaml:"input"`
	Output float64 `yaml:"output"`
}

func (p *Price) cost(in, out int) *float64 {
	if p == nil {
		return nil
	}
	c := (float64(in)*p.Input + float64(out)*p.Output) / 1e6
	return &c
}

// Options configure a run.
type Options struct {
	Model       string
	Samples     int      // judgements per trace, combined by majority
	Concurrency int      // traces judged at once
	Force       bool     // judge again traces already judged with this prompt
	Temperature *float64 // nil: the endpoint's default
	Seed        *int     // sample k is sent seed+k; nil: no seed
	MaxTokens   int      // sent as max_tokens when > 0
	Budget      Budget
	Render      RenderOptions
	Price       *Price // nil: cost unknown
	// HintSource names the annotation source whose findings are offered as
	// hints (the detectors). A trace on which they found system failures
	// only is skipped unless IncludeSystemFailures.
	HintSource            string
	IncludeSystemFailures bool
	Log                   *slog.Logger
}

// Runner judges traces from a store.
type Runner struct {
	backend Backend
	store   Store
	tok     *Tokenizer
	opt     Options
	version string
	source  string

	mu       sync.Mutex
	progress Progress
	started  time.Time
	failures []Failure
	skips    []Skip
}

// Failure is a trace whose judgement failed, with why.
type Failure struct {
	Trace string `json:"trace"`
	Error string `json:"error"`
}

// Skip is a trace that was not sent to the model, with why.
type Skip struct {
	Trace  string `json:"trace"`
	Reason string `json:"reason"`
}

// NewRunner returns a runner.
func NewRunner(b Backend, s Store, tok *Tokenizer, opt Options) *Runner {
	opt.Samples = max(opt.Samples, 1)
	opt.Concurrency = max(opt.Concurrency, 1)
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	return &Runner{backend: b, store: s, tok: tok, opt: opt, version: PromptVersion(opt.Render), source: Source(opt.Model)}
}

// Run judges the given traces, each stored as soon as it is done, in its own
// transaction, so that an interrupted run loses nothing finished. Traces
// already judged by this source with this prompt and number of samples are
// skipped unless Force. Traces whose detector findings are system failures
// only are recorded as skipped, with no call, unless IncludeSystemFailures;
// the check costs nothing, so a trace skipped before is checked again (its
// findings may have changed). It returns an error only when the run could
// not go on: cancelled, a fatal endpoint error, a database error. Traces
// whose judgement failed are recorded as failed and listed by Failures.
func (r *Runner) Run(ctx context.Context, ids []string) error {
	records, err := r.store.JudgeRecords(ctx, r.source, ids)
	if err != nil {
		return fmt.Errorf("reading judge records: %w", err)
	}
	var todo []string
	for _, id := range ids {
		rec, ok := records[id]
		if !r.opt.Force && ok && rec.Status == StatusOK && rec.PromptVersion == r.version && rec.Samples == r.opt.Samples {
			continue
		}
		todo = append(todo, id)
	}
	r.mu.Lock()
	r.started = time.Now()
	r.progress = Progress{Total: len(todo), Skipped: len(ids) - len(todo), Cost: r.opt.Price.cost(0, 0)}
	r.mu.Unlock()

	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.opt.Concurrency)
	for _, id := range todo {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return r.judgeTrace(gctx, id) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// Progress returns the run's counts so far.
func (r *Runner) Progress() Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.progress
	if !r.started.IsZero() {
		p.Elapsed = time.Since(r.started)
	}
	return p
}

// Failures lists the traces whose judgement failed in this run.
func (r *Runner) Failures() []Failure {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Failure(nil), r.failures...)
}

// Skips lists the traces this run did not send to the model, as system
// failures only.
func (r *Runner) Skips() []Skip {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Skip(nil), r.skips...)
}

// Version is the prompt version the runner records.
func (r *Runner) Version() string { return r.version }

// usage is what a piece of judging took.
type usage struct {
	calls, cached int
	in, out       int
}

func (u *usage) add(v usage) {
	u.calls += v.calls
	u.cached += v.cached
	u.in += v.in
	u.out += v.out
}

// judgeTrace judges one trace and stores the result. A trace that cannot
// be judged is recorded as failed; only errors that stop the run are
// returned.
func (r *Runner) judgeTrace(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t, err := r.store.Load(ctx, id)
	if err != nil {
		return fmt.Errorf("loading trace %s: %w", id, err)
	}
	rec := store.JudgeRecord{Trace: id, Source: r.source, PromptVersion: r.version, Samples: r.opt.Samples, Status: StatusOK}
	if reason, skip := SystemOnly(t, r.opt.HintSource); skip && !r.opt.IncludeSystemFailures {
		return r.skip(ctx, rec, reason)
	}
	var spent usage
	var samples []*Answer
	views, err := plan(render(t, r.opt.Render, r.opt.HintSource), r.tok, r.opt.Budget)
	if err == nil {
		rec.Windows = len(views)
		for k := range r.opt.Samples {
			var a *Answer
			a, err = r.judgeSample(ctx, t, views, k, &spent)
			if err != nil {
				if r.opt.Samples > 1 {
					err = fmt.Errorf("sample %d of %d: %w", k+1, r.opt.Samples, err)
				}
				break
			}
			samples = append(samples, a)
		}
	}
	if err != nil && (ctx.Err() != nil || errors.Is(err, ErrFatal) || errors.Is(err, errStore)) {
		return err
	}
	rec.Calls, rec.InputTokens, rec.OutputTokens = spent.calls, spent.in, spent.out
	rec.Cost = r.opt.Price.cost(spent.in, spent.out)
	rec.JudgedAt = time.Now().UTC()
	var findings []trace.Finding
	if err != nil {
		rec.Status, rec.Error = StatusFailed, err.Error()
		r.opt.Log.Warn("judging failed", "trace", id, "err", err)
	} else {
		findings, rec.Agreement = verdicts(samples, r.source)
		rec.Summary, rec.TaskSuccess = samples[0].Summary, taskSuccess(samples)
		if note := systemNote(samples); note != "" {
			rec.Summary = strings.TrimSpace(rec.Summary + " " + note)
			r.opt.Log.Info("the judge answered a system failure", "trace", id, "note", note)
		}
	}
	if err := r.store.PutJudgement(ctx, rec, findings); err != nil {
		return fmt.Errorf("storing the judgement of %s: %w", id, err)
	}
	r.mu.Lock()
	r.progress.Done++
	if rec.Status == StatusFailed {
		r.progress.Failed++
		r.failures = append(r.failures, Failure{Trace: id, Error: rec.Error})
	}
	r.mu.Unlock()
	return nil
}

// skip records a trace as not judged, with why and without findings (any
// the source stored on it before are removed: they were verdicts on a run
// that has no agent behaviour to judge).
func (r *Runner) skip(ctx context.Context, rec store.JudgeRecord, reason string) error {
	rec.Status, rec.Summary, rec.Samples = StatusSkipped, reason, 0
	rec.JudgedAt = time.Now().UTC()
	if err := r.store.PutJudgement(ctx, rec, nil); err != nil {
		return fmt.Errorf("storing the skip of %s: %w", rec.Trace, err)
	}
	r.opt.Log.Info("trace not judged", "trace", rec.Trace, "reason", reason)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progress.Done++
	r.progress.SystemOnly++
	r.skips = append(r.skips, Skip{Trace: rec.Trace, Reason: reason})
	return nil
}

// judgeSample judges every view of a trace in turn, passing each window's
// summary on to the next, and merges the windows' answers.
func (r *Runner) judgeSample(ctx context.Context, t *trace.Trace, views []*view, k int, spent *usage) (*Answer, error) {
	parts := make([]*Answer, 0, len(views))
	summary := ""
	for _, v := range views {
		v.summary = trace.Clip(summary, summaryChars)
		a, err := r.judgeView(ctx, t, v, k, spent)
		if err != nil {
			if len(views) > 1 {
				err = fmt.Errorf("window %d of %d (%s): %w", v.window+1, len(views), v.span(), err)
			}
			return nil, err
		}
		parts = append(parts, a)
		summary = a.Summary
	}
	return mergeWindows(parts), nil
}

// errStore marks database errors met while judging, which stop the run.
var errStore = errors.New("database")

// judgeView gets one valid answer for one view: from the cache, or from the
// endpoint with at most one corrective retry that says exactly what was
// wrong. An answer still invalid after it is an error naming the problems.
func (r *Runner) judgeView(ctx context.Context, t *trace.Trace, v *view, k int, spent *usage) (*Answer, error) {
	req := Request{
		Model:       r.opt.Model,
		Messages:    []Message{{Role: "system", Content: systemPrompt}, {Role: "user", Content: userPrompt(v)}},
		Temperature: r.opt.Temperature,
		MaxTokens:   r.opt.MaxTokens,
	}
	if r.opt.Seed != nil {
		seed := *r.opt.Seed + k
		req.Seed = &seed
	}
	key := cacheKey(req, k)
	cached, err := r.store.CachedAnswer(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("%w: reading the judge cache: %v", errStore, err)
	}
	if cached != nil {
		// An entry that no longer validates (the checks grew stricter) is
		// asked for again rather than trusted.
		if a, problems := accept(cached.Content, "", t, v); len(problems) == 0 {
			spent.add(usage{cached: 1, in: cached.InputTokens, out: cached.OutputTokens})
			r.count(usage{cached: 1})
			return a, nil
		}
	}
	var used usage
	resp, err := r.call(ctx, req, &used)
	if err != nil {
		spent.add(used)
		return nil, err
	}
	a, problems := accept(resp.Content, resp.FinishReason, t, v)
	if len(problems) > 0 {
		r.opt.Log.Info("answer rejected; asking once more", "trace", t.ID, "window", v.window+1, "problems", len(problems))
		retry := req
		retry.Messages = append(append([]Message(nil), req.Messages...),
			Message{Role: "assistant", Content: resp.Content},
			Message{Role: "user", Content: correction(problems)})
		if resp, err = r.call(ctx, retry, &used); err != nil {
			spent.add(used)
			return nil, err
		}
		if a, problems = accept(resp.Content, resp.FinishReason, t, v); len(problems) > 0 {
			spent.add(used)
			return nil, fmt.Errorf("answer rejected after a corrective retry: %s", trace.Clip(strings.Join(problems, "; "), 1500))
		}
	}
	spent.add(used)
	entry := store.CacheEntry{Key: key, Model: r.opt.Model, Content: resp.Content, InputTokens: used.in, OutputTokens: used.out}
	if err := r.store.PutCachedAnswer(ctx, entry); err != nil {
		return nil, fmt.Errorf("%w: writing the judge cache: %v", errStore, err)
	}
	return a, nil
}

// call makes one backend call and accounts for it. Token counts the
// endpoint did not report are estimated with the tokenizer.
func (r *Runner) call(ctx context.Context, req Request, used *usage) (*Response, error) {
	resp, err := r.backend.Complete(ctx, req)
	if err != nil {
		return nil, err
	}
	u := usage{calls: 1, in: resp.InputTokens, out: resp.OutputTokens}
	if u.in == 0 {
		for _, m := range req.Messages {
			u.in += r.tok.Count(m.Content)
		}
	}
	if u.out == 0 {
		u.out = r.tok.Count(resp.Content)
	}
	used.add(u)
	r.count(u)
	return resp, nil
}

// count adds calls and tokens to the run's progress.
func (r *Runner) count(u usage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := &r.progress
	p.Calls += u.calls
	p.CachedCalls += u.cached
	p.InputTokens += u.in
	p.OutputTokens += u.out
	p.Cost = r.opt.Price.cost(p.InputTokens, p.OutputTokens)
}

// accept parses and validates a reply, returning the problems in words the
// corrective message can use.
func accept(content, finishReason string, t *trace.Trace, v *view) (*Answer, []string) {
	raw, err := parseAnswer(content)
	if err != nil {
		if finishReason == "length" {
			return nil, []string{"the reply was cut off at the output token limit before the JSON ended; keep quotes and explanations short"}
		}
		return nil, []string{err.Error()}
	}
	return validate(raw, t, v)
}
