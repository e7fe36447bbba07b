// Command judgequeuebench measures the judge's job queue with real worker
// processes: throughput with 1, 2 and 4 faultline worker processes against
// a fake OpenAI-compatible endpoint that takes a fixed time per call, and
// what killing a worker with SIGKILL mid-run costs: finished verdicts lost
// and verdicts stored twice (both must be 0). bench/judgequeue.sh runs it.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver

	"github.com/faultline/faultline/internal/judge/judgetest"
)

func main() {
	faultline := flag.String("faultline", "faultline", "the faultline binary")
	server := flag.String("pg", "", "PostgreSQL server URL; the bench creates a database on it")
	corpus := flag.String("corpus", "", "traces to ingest")
	latency := flag.Duration("latency", 200*time.Millisecond, "time the fake endpoint takes per call")
	concurrency := flag.Int("concurrency", 4, "jobs each worker runs at once")
	workers := flag.String("workers", "1,2,4", "worker process counts to measure")
	kill := flag.Bool("kill", true, "also run two workers and kill one with SIGKILL mid-run")
	logDir := flag.String("logs", os.TempDir(), "where the workers' output goes")
	profile := flag.Bool("cpuprofile", false, "write each worker's CPU profile next to its output")
	flag.Parse()
	log.SetFlags(0)
	ctx := context.Background()

	srv := judgetest.NewServer(func(c judgetest.Call) judgetest.Reply {
		return judgetest.Reply{Content: judgetest.ValidAnswer(c.User()), InputTokens: 2000, OutputTokens: 300}
	})
	srv.Latency = *latency
	defer srv.Close()

	dsn, db := createDatabase(ctx, *server)
	defer db.Close()
	b := &bench{faultline: *faultline, dsn: dsn, db: db, srv: srv, url: srv.URL(), logs: *logDir, concurrency: *concurrency, profile: *profile}
	defer dropDatabase(ctx, *server, dsn)
	b.run("ingest", "-q", *corpus)
	// Every verdict stored, counted by trace and source: a trace stored
	// twice by one run would show here, whatever judge_runs keeps.
	b.exec(`CREATE TABLE bench_commits (trace_id TEXT, source TEXT)`)
	b.exec(`CREATE FUNCTION bench_commit() RETURNS trigger LANGUAGE plpgsql AS
		$$BEGIN INSERT INTO bench_commits VALUES (NEW.trace_id, NEW.source); RETURN NULL; END$$`)
	b.exec(`CREATE TRIGGER bench_commit AFTER INSERT OR UPDATE ON judge_runs FOR EACH ROW EXECUTE FUNCTION bench_commit()`)

	fmt.Printf("fake endpoint: %s per call; %d jobs at once per worker; ideal: workers x %d / %s\n", *latency, *concurrency, *concurrency, *latency)
	var base float64
	for _, w := range strings.Split(*workers, ",") {
		n, _ := strconv.Atoi(w)
		model := "bench-w" + w
		jobs := b.enqueue(model)
		start := time.Now()
		b.workers(n, model, nil)
		wall := time.Since(start)
		window := b.window(model)
		rate := float64(jobs) / window.Seconds()
		ideal := float64(n**concurrency) / latency.Seconds()
		if base == 0 {
			base = rate
		}
		fmt.Printf("%d worker(s): %d traces in %.2fs (%.2fs with process start and exit): %.1f traces/s; %.0f%% of ideal (%.0f/s); %.2fx one worker (ideal %dx)\n",
			n, jobs, window.Seconds(), wall.Seconds(), rate, 100*rate/ideal, ideal, rate/base, n)
		b.check(model, jobs)
	}
	if *kill {
		b.killRun()
	}
}

type bench struct {
	faultline, dsn, url, logs string
	db                        *sql.DB
	srv                       *judgetest.Server
	concurrency               int
	profile                   bool
}

// createDatabase creates a new database on the server for the bench.
func createDatabase(ctx context.Context, server string) (string, *sql.DB) {
	admin, err := sql.Open("pgx", server)
	if err != nil {
		log.Fatal(err)
	}
	defer admin.Close()
	name := fmt.Sprintf("faultline_judgequeue_bench_%d", time.Now().UnixNano())
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		log.Fatalf("creating the bench database: %v", err)
	}
	u, err := url.Parse(server)
	if err != nil {
		log.Fatal(err)
	}
	u.Path = "/" + name
	db, err := sql.Open("pgx", u.String())
	if err != nil {
		log.Fatal(err)
	}
	return u.String(), db
}

// dropDatabase drops the bench's database, once its connections are gone.
func dropDatabase(ctx context.Context, server, dsn string) {
	admin, err := sql.Open("pgx", server)
	if err != nil {
		log.Fatal(err)
	}
	defer admin.Close()
	u, _ := url.Parse(dsn)
	if _, err := admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+strings.TrimPrefix(u.Path, "/")+` WITH (FORCE)`); err != nil {
		log.Printf("dropping the bench database: %v", err)
	}
}

func (b *bench) exec(q string, args ...any) {
	if _, err := b.db.Exec(q, args...); err != nil {
		log.Fatalf("%s: %v", q, err)
	}
}

func (b *bench) count(q string, args ...any) int {
	var n int
	if err := b.db.QueryRow(q, args...).Scan(&n); err != nil {
		log.Fatalf("%s: %v", q, err)
	}
	return n
}

// run runs a faultline command to its end.
func (b *bench) run(args ...string) string {
	out, err := exec.Command(b.faultline, append([]string{"--db", b.dsn}, args...)...).CombinedOutput()
	if err != nil {
		log.Fatalf("faultline %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// enqueue queues every trace for model and returns how many were queued.
func (b *bench) enqueue(model string) int {
	b.run("judge", "--queue", "-q", "--model", model, "--base-url", b.url, "--retries", "3")
	return b.count(`SELECT count(*) FROM river_job WHERE args->>'model' = $1`, model)
}

// workers starts n worker processes that exit when the queue is empty and
// waits for them; started, when given, is told of each process.
func (b *bench) workers(n int, model string, started func(i int, p *os.Process)) []error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		logf, err := os.Create(filepath.Join(b.logs, fmt.Sprintf("%s-worker%d.log", model, i)))
		if err != nil {
			log.Fatal(err)
		}
		args := []string{"--db", b.dsn, "worker", "--until-empty", "--poll", "100ms", "--concurrency", strconv.Itoa(b.concurrency),
			"--job-timeout", "5s", "--min-backoff", "200ms", "--max-backoff", "1s"}
		if b.profile {
			args = append(args, "--cpuprofile", strings.TrimSuffix(logf.Name(), ".log")+".pprof")
		}
		cmd := exec.Command(b.faultline, args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			log.Fatal(err)
		}
		if started != nil {
			started(i, cmd.Process)
		}
		wg.Go(func() {
			errs[i] = cmd.Wait()
			logf.Close()
		})
	}
	wg.Wait()
	return errs
}

// window is the time from the first job's start to the last one's end, as
// the database recorded them.
func (b *bench) window(model string) time.Duration {
	var secs float64
	err := b.db.QueryRow(`SELECT extract(epoch FROM max(finalized_at) - min(attempted_at)) FROM river_job WHERE args->>'model' = $1`, model).Scan(&secs)
	if err != nil {
		log.Fatal(err)
	}
	return time.Duration(secs * float64(time.Second))
}

// check says whether every job finished and every trace was stored once.
func (b *bench) check(model string, jobs int) (unjudged, duplicates int) {
	source := "judge:" + model
	unjudged = jobs - b.count(`SELECT count(*) FROM judge_runs WHERE source = $1 AND status IN ('ok', 'skipped')`, source)
	duplicates = b.count(`SELECT COALESCE(sum(n - 1), 0) FROM (SELECT count(*) AS n FROM bench_commits WHERE source = $1 GROUP BY trace_id) c`, source)
	notDone := b.count(`SELECT count(*) FROM river_job WHERE args->>'model' = $1 AND state <> 'completed'`, model)
	if unjudged != 0 || duplicates != 0 || notDone != 0 {
		fmt.Printf("  PROBLEM: %d traces without a judgement, %d stored twice, %d jobs not completed\n", unjudged, duplicates, notDone)
	}
	return unjudged, duplicates
}

// killRun runs two workers and kills one with SIGKILL once a third of the
// traces are judged; the other finishes, taking up the dead one's jobs once
// River's rescuer finds them. It prints the verdicts stored before the kill
// that are missing or were rewritten at the end, and those stored twice.
func (b *bench) killRun() {
	model := "bench-kill"
	source := "judge:" + model
	jobs := b.enqueue(model)
	calls := len(b.srv.Calls())
	start := time.Now()
	var killedAt time.Duration
	var before map[string]string
	b.workers(2, model, func(i int, p *os.Process) {
		if i != 0 {
			return
		}
		go func() {
			for b.count(`SELECT count(*) FROM judge_runs WHERE source = $1`, source) < jobs/3 {
				time.Sleep(20 * time.Millisecond)
			}
			if err := p.Kill(); err != nil {
				log.Fatal(err)
			}
			killedAt = time.Since(start)
			// What the dead worker committed is committed once its
			// connections are gone.
			time.Sleep(500 * time.Millisecond)
			before = b.judgedAt(source)
		}()
	})
	wall := time.Since(start)
	after := b.judgedAt(source)
	lost, rewritten := 0, 0
	for id, at := range before {
		switch now, ok := after[id]; {
		case !ok:
			lost++
		case now != at:
			rewritten++
		}
	}
	unjudged, duplicates := b.check(model, jobs)
	repeated := len(b.srv.Calls()) - calls - (jobs - b.count(`SELECT count(*) FROM judge_runs WHERE source = $1 AND status = 'skipped'`, source))
	fmt.Printf("kill -9 of one of 2 workers at %.1fs, %d of %d traces stored: finished verdicts lost %d, rewritten %d; duplicate verdicts %d; traces left unjudged %d; calls repeated for the dead worker's unfinished jobs %d; all done in %.1fs\n",
		killedAt.Seconds(), len(before), jobs, lost, rewritten, duplicates, unjudged, repeated, wall.Seconds())
}

func (b *bench) judgedAt(source string) map[string]string {
	rows, err := b.db.Query(`SELECT trace_id, judged_at FROM judge_runs WHERE source = $1`, source)
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, at string
		if err := rows.Scan(&id, &at); err != nil {
			log.Fatal(err)
		}
		out[id] = at
	}
	return out
}
