package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/internal/judge"
	"github.com/faultline/faultline/internal/judgequeue"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/store/postgres"
)

// queueFlags are the judge command's flags for spreading its work over
// worker processes.
type queueFlags struct {
	enqueue, status bool
}

func (q *queueFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&q.enqueue, "queue", false, "PostgreSQL --db only: queue one job per selected trace for faultline worker processes instead of judging here "+
		"(traces already judged with this prompt are left out unless --force; a trace queued with the same model, prompt and parameters is not queued twice; "+
		"--retries counts a job's attempts after the first, --rpm is shared by all workers)")
	fl.BoolVar(&q.status, "status", false, "print the judge queue by model (queued, running, done, failed, calls, tokens, cost) and judge nothing")
}

// errQueueNeedsPostgres refuses --queue and --status on SQLite, whose one
// writer cannot be shared by worker processes.
var errQueueNeedsPostgres = errors.New("the judge queue needs a PostgreSQL database (--db postgres://…), which worker processes share; on SQLite, judge runs in this process: drop --queue")

// queueJSON is the JSON form of judge --queue.
type queueJSON struct {
	Source        string `json:"source"`
	Model         string `json:"model"`
	PromptVersion string `json:"prompt_version"`
	Selected      int    `json:"selected"`
	judgequeue.Enqueued
	AlreadyJudged int `json:"already_judged"`
}

// enqueueJudge queues the selected traces for the workers, with the run's
// settings in each job, and leaves out those the model already judged with
// this prompt and number of samples (unless force), as an in-process run
// skips them.
func (a *app) enqueueJudge(ctx context.Context, st database, cfg *judge.Config, opt judge.Options, force, asJSON bool, traces []store.Summary) error {
	pg, ok := st.Store.(*postgres.Store)
	if !ok {
		return errQueueNeedsPostgres
	}
	model := cfg.ModelSettings(cfg.Model)
	opt.Force = force
	spec := judgequeue.NewSpec(opt, model, judgequeue.Endpoint{
		BaseURL: cfg.BaseURL, APIKeyEnv: cfg.APIKeyEnv, Format: cfg.ResponseFormat, RequestsPerMinute: cfg.RequestsPerMinute, Price: model.Price,
	})
	ids := make([]string, len(traces))
	for i, t := range traces {
		ids[i] = t.ID
	}
	todo := ids
	if !force {
		records, err := pg.JudgeRecords(ctx, judge.Source(cfg.Model), ids)
		if err != nil {
			return err
		}
		todo = nil
		for _, id := range ids {
			r, ok := records[id]
			if ok && r.Status == judge.StatusOK && r.PromptVersion == spec.PromptVersion && r.Samples == spec.Params.Samples {
				continue
			}
			todo = append(todo, id)
		}
	}
	res, err := judgequeue.Enqueue(ctx, pg.DB(), spec, todo, *cfg.Retries+1)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(a.stdout, queueJSON{Source: judge.Source(cfg.Model), Model: cfg.Model, PromptVersion: spec.PromptVersion,
			Selected: len(ids), Enqueued: res, AlreadyJudged: len(ids) - len(todo)})
	}
	fmt.Fprintf(a.stdout, "queued %d traces for %s (source %s, prompt %s): %d already queued, %d already judged\n",
		res.Added, cfg.Model, judge.Source(cfg.Model), spec.PromptVersion, res.Duplicates, len(ids)-len(todo))
	if !a.quiet && res.Added > 0 {
		fmt.Fprintln(a.stderr, "run faultline worker (any number, on any machine with this --db) to judge them; faultline judge --status follows them")
	}
	return nil
}

// judgeStatus prints where the judge queue's jobs stand, by model.
func (a *app) judgeStatus(ctx context.Context, asJSON bool) error {
	if !postgres.IsURL(a.dbPath) {
		return errQueueNeedsPostgres
	}
	st, err := a.readStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	pg := st.Store.(*postgres.Store)
	counts, err := judgequeue.Status(ctx, pg.DB())
	if err != nil {
		return err
	}
	if asJSON {
		if counts == nil {
			counts = []judgequeue.Count{}
		}
		return writeJSON(a.stdout, counts)
	}
	if len(counts) == 0 {
		fmt.Fprintln(a.stdout, "no judge job was ever queued in this database (faultline judge --queue queues some)")
		return nil
	}
	for _, c := range counts {
		cost := "unknown"
		if c.Cost != nil {
			cost = fmt.Sprintf("$%.4f", *c.Cost)
		}
		fmt.Fprintf(a.stdout, "%s: %d queued (%d waiting to retry), %d running, %d done, %d failed; %d calls, %d input and %d output tokens, cost %s\n",
			c.Model, c.Queued, c.Retrying, c.Running, c.Done, c.Failed, c.Calls, c.InputTokens, c.OutputTokens, cost)
	}
	return nil
}
