// Package judgequeue spreads the LLM judge's work over any number of worker
// processes, on any machines, through a River job queue kept in the same
// PostgreSQL database as the traces: one job per trace, unique on the
// trace, the judge model, the prompt version and the parameters that shape
// the verdicts. A worker judges a job's trace with the in-process judge
// (same client, validation, cache) and commits the verdicts and the job's
// completion in one transaction, so that a worker killed mid-job loses
// nothing finished and duplicates nothing.
package judgequeue

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/faultline/faultline/internal/judge"
)

// Kind is the River job kind of a trace to judge, and QueueName the
// River queue its jobs go to.
const (
	Kind      = "faultline_judge"
	QueueName = "faultline_judge"
)

// Params are the settings that shape a trace's verdicts: two jobs that
// differ in any of them are two judgements.
type Params struct {
	Samples     int      `json:"samples"`
	Temperature *float64 `json:"temperature,omitempty"`
	Seed        *int     `json:"seed,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	// Context and OutputReserve are the model's token budget, which decides
	// how a long trace is cut into windows; Encoding is the vocabulary the
	// budget is counted in.
	Context       int                 `json:"context"`
	OutputReserve int                 `json:"output_reserve"`
	Encoding      string              `json:"encoding"`
	Render        judge.RenderOptions `json:"render"`
	HintSource    string              `json:"hint_source"`
	// IncludeSystemFailures and Force are the judge command's flags of the
	// same names.
	IncludeSystemFailures bool `json:"include_system_failures,omitempty"`
	Force                 bool `json:"force,omitempty"`
}

// Endpoint is where and how a job's calls go. It is not part of a job's
// uniqueness: the same model behind another URL gives the same judgement.
type Endpoint struct {
	BaseURL string `json:"base_url"`
	// APIKeyEnv names the variable holding the key in the worker's
	// environment (empty: FAULTLINE_API_KEY, then OPENAI_API_KEY); the key
	// itself is never stored.
	APIKeyEnv string `json:"api_key_env,omitempty"`
	Format    string `json:"response_format"`
	// RequestsPerMinute is the endpoint's rate limit, shared by all
	// workers; 0: none.
	RequestsPerMinute float64      `json:"requests_per_minute,omitempty"`
	Price             *judge.Price `json:"price,omitempty"`
}

// Spec is what every job of one judge run carries: the model, the prompt
// version, the parameters and the endpoint.
type Spec struct {
	Model         string   `json:"model" river:"unique"`
	PromptVersion string   `json:"prompt_version" river:"unique"`
	Params        Params   `json:"params" river:"unique"`
	Endpoint      Endpoint `json:"endpoint"`
}

// Args are a job's arguments: one trace and the run's Spec. The fields
// tagged unique make the job's uniqueness key.
type Args struct {
	Trace string `json:"trace" river:"unique"`
	Spec
}

// Kind is River's name for the job's type.
func (Args) Kind() string { return Kind }

// NewSpec describes a judge run of the given options for its jobs.
func NewSpec(opt judge.Options, model judge.ModelConfig, ep Endpoint) Spec {
	return Spec{
		Model:         opt.Model,
		PromptVersion: judge.PromptVersion(opt.Render),
		Params: Params{
			Samples: max(opt.Samples, 1), Temperature: opt.Temperature, Seed: opt.Seed, MaxTokens: opt.MaxTokens,
			Context: opt.Budget.Context, OutputReserve: opt.Budget.Output, Encoding: model.Encoding, Render: opt.Render,
			HintSource: opt.HintSource, IncludeSystemFailures: opt.IncludeSystemFailures, Force: opt.Force,
		},
		Endpoint: ep,
	}
}

// Options are the judge options a worker runs a job with.
func (s Spec) Options() judge.Options {
	p := s.Params
	return judge.Options{
		Model: s.Model, Samples: p.Samples, Concurrency: 1, Force: p.Force, Temperature: p.Temperature, Seed: p.Seed,
		MaxTokens: p.MaxTokens, Budget: judge.Budget{Context: p.Context, Output: p.OutputReserve}, Render: p.Render,
		Price: s.Endpoint.Price, HintSource: p.HintSource, IncludeSystemFailures: p.IncludeSystemFailures,
	}
}

// uniqueStates are the job states in which a job blocks another of the
// same key. A completed job does not: the enqueuer leaves out the traces
// already judged, so a trace whose judgement failed can be queued again
// once the failure is recorded, as an in-process run judges it again.
var uniqueStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
	rivertype.JobStateRetryable, rivertype.JobStateScheduled,
}

// advisoryLock is the key under which a process sets up the queue's
// tables, so that workers starting together migrate once.
const advisoryLock = 0x666c2d7175657565 // "fl-queue"

// Setup brings River's tables (by River's own versioned migrations, each
// in its transaction: some add an enum value a later statement uses) and
// the shared rate limit's table up to date. A session advisory lock, held
// on a connection of its own, makes processes starting together migrate
// one after the other; it goes with the session should the process die.
func Setup(ctx context.Context, db *sql.DB) error {
	migrator, err := rivermigrate.New(riverdatabasesql.New(db), &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("job queue migrations: %w", err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("job queue migrations: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, int64(advisoryLock)); err != nil {
		return fmt.Errorf("job queue migrations: waiting for another process's: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(advisoryLock))
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("job queue migrations: %w", err)
	}
	if _, err := conn.ExecContext(ctx, rateTable); err != nil {
		return fmt.Errorf("job queue rate limit table: %w", err)
	}
	return nil
}

// Enqueued counts what Enqueue did.
type Enqueued struct {
	Added int `json:"added"`
	// Duplicates were already queued or being judged with the same key.
	Duplicates int `json:"duplicates"`
}

// insertBatch bounds the jobs inserted by one statement.
const insertBatch = 500

// Enqueue adds a job per trace, each tried at most attempts times, and
// skips those already queued or running with the same key.
func Enqueue(ctx context.Context, db *sql.DB, spec Spec, ids []string, attempts int) (Enqueued, error) {
	var out Enqueued
	if err := Setup(ctx, db); err != nil {
		return out, err
	}
	client, err := river.NewClient(riverdatabasesql.New(db), &river.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return out, fmt.Errorf("job queue client: %w", err)
	}
	opts := &river.InsertOpts{Queue: QueueName, MaxAttempts: max(attempts, 1), UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: uniqueStates}}
	for start := 0; start < len(ids); start += insertBatch {
		batch := ids[start:min(start+insertBatch, len(ids))]
		params := make([]river.InsertManyParams, len(batch))
		for i, id := range batch {
			params[i] = river.InsertManyParams{Args: Args{Trace: id, Spec: spec}, InsertOpts: opts}
		}
		res, err := client.InsertMany(ctx, params)
		if err != nil {
			return out, fmt.Errorf("enqueueing judge jobs: %w", err)
		}
		for _, r := range res {
			if r.UniqueSkippedAsDuplicate {
				out.Duplicates++
			} else {
				out.Added++
			}
		}
	}
	return out, nil
}
