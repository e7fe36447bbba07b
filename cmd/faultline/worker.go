package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/internal/judgequeue"
	"github.com/faultline/faultline/internal/store/postgres"
)

// workerFlags are the worker command's flags.
type workerFlags struct {
	concurrency int
	timeout     time.Duration
	jobTimeout  time.Duration
	grace       time.Duration
	poll        time.Duration
	minBackoff  time.Duration
	maxBackoff  time.Duration
	untilEmpty  bool
}

func (a *app) workerCommand() *cobra.Command {
	var f workerFlags
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Judge the traces faultline judge --queue queued, as one of any number of worker processes",
		Long: `Take the judge jobs that faultline judge --queue put in the PostgreSQL database named by
--db (or $FAULTLINE_DB) and judge their traces, as many at once as --concurrency says.
Start any number of workers, on any machines that reach the database and the endpoint:
each job (one trace) is run by one worker at a time.

A job carries the run's settings: the model, prompt version, samples, temperature,
seed, token budget, endpoint (base URL, response format, requests per minute, price)
and the name of the variable holding the API key, which is read from the worker's
environment ($FAULTLINE_API_KEY, then $OPENAI_API_KEY, unless the job names another)
and never stored. The worker judges as faultline judge does in-process, with the
same client, checks and answer cache; a repeat makes no call.

A trace's verdicts and its job's completion are committed in one transaction: a worker
killed mid-job loses nothing finished, and its unfinished jobs are taken up by another
worker once they have run for --job-timeout plus 10 seconds (checked every 30 seconds),
without judging any trace twice.

A call answered with 429, 408 or 5xx, a timeout or a network error fails the job's
attempt, and the job is tried again after a pause growing from --min-backoff to
--max-backoff, at most retries+1 times in all (judge --retries when it was queued,
default 5); answers already received are cached, so an attempt resumes where the
last stopped. The trace is recorded as failed once, after the last attempt. An answer
still invalid after its corrective retry is recorded as failed at once, as in-process.

The endpoint's requests-per-minute limit (judge --rpm or requests_per_minute when
queued) is shared by all workers through the database: one call slot at a time per
endpoint, whatever the number of workers.

On SIGINT or SIGTERM the worker takes no new job and waits up to --grace for those it
runs; past it, they are cancelled and go back to the queue. faultline judge --status
shows the queue: queued, running, done, failed, calls, tokens and cost.`,
		Example: `  faultline --db postgres://faultline@db/faultline judge --queue --model gpt-4.1-mini --where outcome=failure
  OPENAI_API_KEY=... faultline --db postgres://faultline@db/faultline worker --concurrency 8
  faultline --db postgres://faultline@db/faultline judge --status`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runWorker(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.concurrency, "concurrency", judgequeue.DefaultConcurrency, "jobs (traces) this worker judges at once")
	fl.DurationVar(&f.timeout, "timeout", defaultTimeout, "time limit of one call to the endpoint; a slower call fails the attempt")
	fl.DurationVar(&f.jobTimeout, "job-timeout", judgequeue.DefaultJobTimeout, "time limit of one job; a longer one is cancelled and retried, and a dead worker's jobs are taken up this long (plus 10s) after they started")
	fl.DurationVar(&f.grace, "grace", time.Minute, "on SIGINT or SIGTERM, how long to wait for running jobs before cancelling them")
	fl.DurationVar(&f.poll, "poll", judgequeue.DefaultPollInterval, "how often an idle worker looks for jobs")
	fl.DurationVar(&f.minBackoff, "min-backoff", judgequeue.DefaultMinBackoff, "pause before a failed job's second attempt; it doubles with each attempt")
	fl.DurationVar(&f.maxBackoff, "max-backoff", judgequeue.DefaultMaxBackoff, "longest pause between a job's attempts")
	fl.BoolVar(&f.untilEmpty, "until-empty", false, "exit once no job is queued, waiting to retry or running, instead of waiting for more")
	return cmd
}

func (a *app) runWorker(cmd *cobra.Command, f *workerFlags) error {
	ctx := cmd.Context()
	if !postgres.IsURL(a.dbPath) {
		return errQueueNeedsPostgres
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	w, err := judgequeue.NewWorker(ctx, st.Store.(*postgres.Store), judgequeue.WorkerOptions{
		Concurrency: f.concurrency, Timeout: f.timeout, JobTimeout: f.jobTimeout, PollInterval: f.poll,
		MinBackoff: f.minBackoff, MaxBackoff: f.maxBackoff, UntilEmpty: f.untilEmpty, APIKey: apiKey, Log: a.log,
	})
	if err != nil {
		return err
	}
	if !a.quiet {
		fmt.Fprintf(a.stderr, "worker: judging queued traces from %s, %d at once\n", a.dbName(), f.concurrency)
	}
	runErr := w.Run(ctx, f.grace)
	s := w.Stats()
	if !a.quiet {
		fmt.Fprintf(a.stderr, "worker: %d jobs done, %d recorded as failed, %d calls\n", s.Done, s.Failed, s.Calls)
	}
	return runErr
}
