package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/faultline/faultline/internal/judge"
	"github.com/faultline/faultline/internal/judge/judgetest"
	"github.com/faultline/faultline/internal/judgequeue"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/store/postgres"
	"github.com/faultline/faultline/internal/store/postgres/pgtest"
	"github.com/faultline/faultline/trace"
)

// queueCLI is a PostgreSQL database with the example cohort and a fake
// endpoint answering with script.
func queueCLI(t *testing.T, script func(judgetest.Call) judgetest.Reply) (*cli, *judgetest.Server) {
	t.Helper()
	t.Setenv("FAULTLINE_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	c := &cli{t: t, db: pgtest.Database(t)}
	if _, errOut, code := c.run("", "ingest", "-q", examples); code != exitOK {
		t.Fatalf("ingest: %s", errOut)
	}
	srv := judgetest.NewServer(script)
	t.Cleanup(srv.Close)
	return c, srv
}

// fastWorker are worker flags that keep a test short: frequent polls,
// short pauses between attempts, exit when the queue is empty.
var fastWorker = []string{"worker", "-q", "--until-empty", "--poll", "50ms", "--min-backoff", "10ms", "--max-backoff", "50ms"}

// enqueue queues the cohort for fake-model and checks the command succeeded.
func (c *cli) enqueue(srv *judgetest.Server, extra ...string) queueJSON {
	c.t.Helper()
	out, errOut, code := c.run("", append([]string{"judge", "--queue", "--json", "--model", "fake-model", "--base-url", srv.URL()}, extra...)...)
	var res queueJSON
	if code != exitOK || json.Unmarshal([]byte(out), &res) != nil {
		c.t.Fatalf("judge --queue: exit %d\n%s%s", code, out, errOut)
	}
	return res
}

func (c *cli) work(args ...string) {
	c.t.Helper()
	if out, errOut, code := c.run("", append(append([]string{}, fastWorker...), args...)...); code != exitOK {
		c.t.Fatalf("worker: exit %d\n%s%s", code, out, errOut)
	}
}

// status is judge --status --json for fake-model.
func (c *cli) status() judgequeue.Count {
	c.t.Helper()
	out, errOut, code := c.run("", "judge", "--status", "--json")
	var counts []judgequeue.Count
	if code != exitOK || json.Unmarshal([]byte(out), &counts) != nil || len(counts) != 1 || counts[0].Model != "fake-model" {
		c.t.Fatalf("judge --status: exit %d\n%s%s", code, out, errOut)
	}
	return counts[0]
}

// judgements reads every trace's judge record and findings of fake-model.
func judgements(t *testing.T, db string) (map[string]store.JudgeRecord, map[string][]trace.Finding) {
	t.Helper()
	ctx := context.Background()
	st, err := postgres.OpenReadOnly(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, err := st.List(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(list))
	findings := map[string][]trace.Finding{}
	for i, s := range list {
		ids[i] = s.ID
		all, err := st.Findings(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range all {
			if f.Source == judge.Source("fake-model") {
				findings[s.ID] = append(findings[s.ID], f)
			}
		}
	}
	records, err := st.JudgeRecords(ctx, judge.Source("fake-model"), ids)
	if err != nil {
		t.Fatal(err)
	}
	return records, findings
}

// TestJudgeQueueIsUnique: queueing the same traces with the same model,
// prompt and parameters twice adds nothing; other parameters are another
// judgement; traces already judged are left out.
func TestJudgeQueueIsUnique(t *testing.T) {
	c, srv := queueCLI(t, validReply)
	n := c.traceCount()
	if res := c.enqueue(srv); res.Added != n || res.Duplicates != 0 || res.Selected != n {
		t.Fatalf("first --queue: %+v, want %d added", res, n)
	}
	if res := c.enqueue(srv); res.Added != 0 || res.Duplicates != n {
		t.Errorf("second --queue: %+v, want all %d already queued", res, n)
	}
	// The endpoint is not part of a job's key: the same model elsewhere
	// gives the same judgement.
	if res := c.enqueue(srv, "--rpm", "6000"); res.Added != 0 || res.Duplicates != n {
		t.Errorf("--queue with another rate limit: %+v, want all %d already queued", res, n)
	}
	if s := c.status(); s.Queued != n || s.Running != 0 || s.Done != 0 || s.Failed != 0 {
		t.Errorf("status after queueing: %+v", s)
	}
	if out, _, _ := c.run("", "judge", "--status"); !strings.Contains(out, fmt.Sprintf("fake-model: %d queued (0 waiting to retry), 0 running, 0 done, 0 failed", n)) {
		t.Errorf("judge --status:\n%s", out)
	}
	c.work()
	if res := c.enqueue(srv); res.Added != 0 || res.AlreadyJudged != n {
		t.Errorf("--queue after the workers judged: %+v, want all %d already judged", res, n)
	}
	if s := c.status(); s.Queued != 0 || s.Done != n || s.Failed != 0 || s.Calls != n || s.InputTokens != n*2000 {
		t.Errorf("status after the worker: %+v", s)
	}
	if res := c.enqueue(srv, "--samples", "2", "--temperature", "0.7"); res.Added != n {
		t.Errorf("--queue with other parameters: %+v, want %d added", res, n)
	}
	if s := c.status(); s.Queued != n || s.Done != n {
		t.Errorf("status after queueing with other parameters: %+v", s)
	}
}

// TestWorkerJudgesAsInProcess: the verdicts and records a worker stores
// are those an in-process judge run stores.
func TestWorkerJudgesAsInProcess(t *testing.T) {
	queued, srv := queueCLI(t, validReply)
	inProcess := &cli{t: t, db: pgtest.Database(t)}
	if _, errOut, code := inProcess.run("", "ingest", "-q", examples); code != exitOK {
		t.Fatal(errOut)
	}
	if out, errOut, code := inProcess.run("", "judge", "-q", "--model", "fake-model", "--base-url", srv.URL()); code != exitOK {
		t.Fatalf("in-process judge: exit %d\n%s%s", code, out, errOut)
	}
	queued.enqueue(srv)
	queued.work()
	wantRecords, wantFindings := judgements(t, inProcess.db)
	gotRecords, gotFindings := judgements(t, queued.db)
	if len(wantRecords) == 0 || len(gotRecords) != len(wantRecords) {
		t.Fatalf("%d records from the worker, %d in-process", len(gotRecords), len(wantRecords))
	}
	for id, want := range wantRecords {
		got := gotRecords[id]
		got.JudgedAt, want.JudgedAt = time.Time{}, time.Time{}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if string(gj) != string(wj) {
			t.Errorf("trace %s record\nworker:     %s\nin-process: %s", id, gj, wj)
		}
		gj, _ = json.Marshal(gotFindings[id])
		wj, _ = json.Marshal(wantFindings[id])
		if string(gj) != string(wj) {
			t.Errorf("trace %s findings\nworker:     %s\nin-process: %s", id, gj, wj)
		}
	}
}

// TestWorkerRetriesTransientErrors: each trace's first two calls get a 429
// and a 503; the job is tried again and the trace judged.
func TestWorkerRetriesTransientErrors(t *testing.T) {
	seen := map[string]int{}
	c, srv := queueCLI(t, func(call judgetest.Call) judgetest.Reply {
		seen[call.User()]++
		switch seen[call.User()] {
		case 1:
			return judgetest.Reply{Status: http.StatusTooManyRequests, Body: `{"error":{"message":"slow down"}}`}
		case 2:
			return judgetest.Reply{Status: http.StatusServiceUnavailable, Body: `{"error":{"message":"overloaded"}}`}
		}
		return validReply(call)
	})
	n := c.traceCount()
	c.enqueue(srv, "--retries", "3")
	c.work()
	records, _ := judgements(t, c.db)
	for id, r := range records {
		if r.Status != judge.StatusOK || r.Calls != 1 {
			t.Errorf("trace %s: %+v, want ok with the one call that succeeded", id, r)
		}
	}
	if len(records) != n || len(srv.Calls()) != 3*n {
		t.Errorf("%d of %d traces judged with %d calls, want %d", len(records), n, len(srv.Calls()), 3*n)
	}
	if s := c.status(); s.Done != n || s.Failed != 0 || s.Queued != 0 {
		t.Errorf("status: %+v", s)
	}
	attempts := jobAttempts(t, c.db)
	for _, a := range attempts {
		if a != 3 {
			t.Errorf("job attempts %v, want 3 each", attempts)
			break
		}
	}
}

// jobAttempts lists the attempts of every judge job.
func jobAttempts(t *testing.T, dsn string) []int {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT attempt FROM river_job WHERE kind = $1`, judgequeue.Kind)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var a int
		if err := rows.Scan(&a); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// TestWorkerRecordsFailureOnceAfterLastAttempt: an endpoint that always
// answers 503 is called once per attempt, and the trace is recorded as
// failed by its last attempt only: at every call, no more traces are
// recorded than have had their last call.
func TestWorkerRecordsFailureOnceAfterLastAttempt(t *testing.T) {
	var db *sql.DB
	seen := map[string]int{}
	last, early := 0, 0
	c, srv := queueCLI(t, func(call judgetest.Call) judgetest.Reply {
		var recorded int
		if err := db.QueryRow(`SELECT count(*) FROM judge_runs`).Scan(&recorded); err != nil || recorded > last {
			early++
		}
		if seen[call.User()]++; seen[call.User()] == 3 {
			last++
		}
		return judgetest.Reply{Status: http.StatusServiceUnavailable, Body: `{"error":{"message":"down"}}`}
	})
	var err error
	if db, err = sql.Open("pgx", c.db); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := c.traceCount()
	c.enqueue(srv, "--retries", "2")
	c.work()
	records, findings := judgements(t, c.db)
	for id, r := range records {
		if r.Status != judge.StatusFailed || !strings.Contains(r.Error, "after 3 attempts: endpoint answered 503") || len(findings[id]) != 0 {
			t.Errorf("trace %s: %+v, %d findings", id, r, len(findings[id]))
		}
	}
	if len(records) != n || len(srv.Calls()) != 3*n || early != 0 {
		t.Errorf("%d of %d traces recorded with %d calls (want %d), %d calls saw a failure recorded before the last attempt", len(records), n, len(srv.Calls()), 3*n, early)
	}
	if s := c.status(); s.Failed != n || s.Done != 0 || s.Queued != 0 {
		t.Errorf("status: %+v", s)
	}
}

// TestTwoWorkersJudgeEachTraceOnce: two workers on one queue judge every
// trace, each exactly once, their calls reserved under the endpoint's one
// shared rate limit.
func TestTwoWorkersJudgeEachTraceOnce(t *testing.T) {
	c, srv := queueCLI(t, validReply)
	srv.Latency = 20 * time.Millisecond
	n := c.traceCount()
	c.enqueue(srv, "--rpm", "60000")
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { c.work("--concurrency", "2") })
	}
	wg.Wait()
	calls := map[string]int{}
	for _, call := range srv.Calls() {
		calls[call.User()]++
	}
	for _, k := range calls {
		if k != 1 {
			t.Errorf("a trace was sent %d times", k)
		}
	}
	records, _ := judgements(t, c.db)
	if len(calls) != n || len(records) != n {
		t.Errorf("%d prompts sent, %d traces recorded, want %d", len(calls), len(records), n)
	}
	for _, a := range jobAttempts(t, c.db) {
		if a != 1 {
			t.Errorf("a job was attempted %d times", a)
		}
	}
	if s := c.status(); s.Done != n || s.Calls != n {
		t.Errorf("status: %+v", s)
	}
	db, err := sql.Open("pgx", c.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var endpoints []string
	rows, err := db.Query(`SELECT endpoint FROM faultline_judge_rate`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			t.Fatal(err)
		}
		endpoints = append(endpoints, e)
	}
	if len(endpoints) != 1 || endpoints[0] != srv.URL() {
		t.Errorf("rate limit rows %q, want one for %s", endpoints, srv.URL())
	}
}

// TestQueueNeedsPostgres: on SQLite, judge --queue, judge --status and
// worker say that the queue needs PostgreSQL and that judge runs in-process.
func TestQueueNeedsPostgres(t *testing.T) {
	c := newCLI(t)
	for _, args := range [][]string{
		{"judge", "--queue", "--model", "m", "--base-url", "http://127.0.0.1:1/v1"},
		{"judge", "--status"},
		{"worker", "--until-empty"},
	} {
		if args[1] == "--queue" {
			if _, errOut, code := c.run("", "ingest", "-q", examples); code != exitOK {
				t.Fatal(errOut)
			}
		}
		_, errOut, code := c.run("", args...)
		if code != exitFailure || !strings.Contains(errOut, "needs a PostgreSQL database") || !strings.Contains(errOut, "drop --queue") {
			t.Errorf("%v: exit %d\n%s", args, code, errOut)
		}
	}
}
