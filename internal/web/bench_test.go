package web

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/faultline/faultline/internal/store/sqlite"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// The server's own time for its pages on a large store:
//
//	go test ./web -run '^$' -bench . -benchtime 20x
//
// The store (FAULTLINE_BENCH_TRACES traces, 100,000 unless set, each with
// 12 steps, judged on all 14 modes, some detector findings and an outcome,
// a labeller's on one trace in 200, plus one trace of 10,000 steps) is
// generated once per run, or kept in
// FAULTLINE_BENCH_DB when that names a file.

var bench struct {
	once sync.Once
	srv  *Server
	err  error
	n    int
}

func benchServer(b *testing.B) *Server {
	bench.once.Do(func() {
		bench.n = 100_000
		if v := os.Getenv("FAULTLINE_BENCH_TRACES"); v != "" {
			fmt.Sscan(v, &bench.n)
		}
		path := os.Getenv("FAULTLINE_BENCH_DB")
		if path == "" {
			dir, err := os.MkdirTemp("", "faultline-bench")
			if err != nil {
				bench.err = err
				return
			}
			path = filepath.Join(dir, "bench.db")
		}
		fresh := false
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			fresh = true
		}
		ctx := context.Background()
		st, err := sqlite.Open(ctx, path)
		if err != nil {
			bench.err = err
			return
		}
		if fresh {
			start := time.Now()
			if bench.err = generate(ctx, st, bench.n); bench.err != nil {
				return
			}
			fmt.Printf("generated %d traces and a trace of 10,000 steps in %s\n", bench.n, time.Since(start).Round(time.Second))
		}
		bench.srv, bench.err = New(Config{Store: st})
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	return bench.srv
}

var words = strings.Fields("pod deployment service checkout frontend cart ad payment error timeout latency restart CrashLoopBackOff OOMKilled " +
	"kubectl logs events metrics alert firing threshold span trace namespace otel-demo config flag rollout replica")

// generate writes n traces like bench/reportbench's, each with 12 steps of
// words to search, and a trace of 10,000 steps.
func generate(ctx context.Context, st *sqlite.Store, n int) error {
	fs, err := st.File(ctx, ingest.FileInfo{Path: "/bench/cohort.jsonl", Hash: "bench", Format: "codex"})
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(1, 2))
	sentence := func(k int) string {
		var b strings.Builder
		for i := range k {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	models := []string{"sim-strong", "sim-middling", "sim-weak"}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		success := r.Float64() < 0.4
		score := 0.0
		if success {
			score = 1
		}
		tr := &trace.Trace{ID: fmt.Sprintf("bench-%07d", i), Format: "codex", Source: "x", System: "itbench-zero", DetectedWith: "bench", Model: models[i%3],
			Scenario: fmt.Sprint(1 + i%35), Trial: fmt.Sprint(1 + i/105%3), Started: start.Add(time.Duration(r.IntN(1e6)) * time.Second),
			Task: "Diagnose the incident."}
		tr.Append(trace.Step{Kind: trace.KindMessage, Role: "user", Text: "Diagnose the incident."})
		for k := range 5 {
			tr.Append(trace.Step{Kind: trace.KindToolCall, Tool: "shell", Args: fmt.Sprintf(`{"command": "kubectl logs %s"}`, words[r.IntN(len(words))]), CallID: fmt.Sprint(k)})
			tr.Append(trace.Step{Kind: trace.KindToolResult, Text: sentence(40) + fmt.Sprintf(" checkout-%d", i), CallID: fmt.Sprint(k)})
		}
		tr.Append(trace.Step{Kind: trace.KindFinal, Text: sentence(20)})
		tr.Link()
		tr.Outcomes = []trace.Outcome{{Source: "itbench", Metric: "root_cause_recall", Score: &score, Success: &success}}
		for k, mode := range taxonomy.MAST.Modes {
			p := 0.1 + 0.02*float64(k)
			if !success {
				p *= 2
			}
			f := trace.Finding{Mode: mode.Code, Source: "judge:bench", Verdict: trace.Absent}
			if r.Float64() < p {
				f.Verdict, f.Steps = trace.Present, []int{1 + r.IntN(10)}
				if k%3 == 0 {
					tr.Findings = append(tr.Findings, trace.Finding{Mode: mode.Code, Source: "detector", Detector: "bench", Verdict: trace.Present, Steps: f.Steps})
				}
			}
			tr.Findings = append(tr.Findings, f)
			// A labeller who read one trace in 200.
			if i%200 == 0 {
				h := trace.Finding{Mode: mode.Code, Source: "human:bench", Verdict: f.Verdict, Steps: f.Steps}
				if r.Float64() < 0.1 {
					h.Verdict, h.Steps = trace.Unsure, nil
				}
				tr.Findings = append(tr.Findings, h)
			}
		}
		if err := fs.Trace(ctx, tr); err != nil {
			return err
		}
	}
	// The long trace: calls with outputs of a few kilobytes, findings
	// quoting them all along.
	long := &trace.Trace{ID: "bench-long", Format: "codex", Source: "x", Model: "sim-strong", Task: "A long run.", DetectedWith: "bench"}
	for len(long.Steps) < 10_000 {
		k := len(long.Steps)
		long.Append(trace.Step{Kind: trace.KindToolCall, Tool: "shell", Args: fmt.Sprintf(`{"command": "kubectl get pods -n otel-demo # %d"}`, k), CallID: fmt.Sprint(k)})
		long.Append(trace.Step{Kind: trace.KindToolResult, Text: strings.Repeat(sentence(30)+"\n", 1+r.IntN(60)), CallID: fmt.Sprint(k)})
	}
	long.Link()
	for k := 0; k < 10_000; k += 37 {
		long.Findings = append(long.Findings, trace.Finding{Mode: "FM-1.3", Source: "detector", Detector: "bench", Verdict: trace.Present,
			Steps: []int{k - k%2}, Quote: fmt.Sprintf("kubectl get pods -n otel-demo # %d", k-k%2)})
	}
	if err := fs.Trace(ctx, long); err != nil {
		return err
	}
	return fs.Close(ctx, ingest.FileResult{})
}

// benchGet serves one request b.N times and reports the response's size.
func benchGet(b *testing.B, path string, header ...string) {
	srv := benchServer(b)
	benchRequests(b, func() *Server { return srv }, path, header...)
}

// benchFirstView is benchGet with a new server for every request, so that
// nothing is kept from an earlier view.
func benchFirstView(b *testing.B, path string) {
	cfg := benchServer(b).cfg
	benchRequests(b, func() *Server {
		srv, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		return srv
	}, path)
}

// benchRequests times the request, after one untimed: the first request
// also pays for reading the database into SQLite's page cache and, on a
// server that keeps pages, fills its cache.
func benchRequests(b *testing.B, server func() *Server, path string, header ...string) {
	get := func() int {
		req := httptest.NewRequest("GET", path, nil)
		req.Host = "127.0.0.1"
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		w := httptest.NewRecorder()
		server().ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("GET %s: %d %s", path, w.Code, w.Body.String())
		}
		return w.Body.Len()
	}
	get()
	var size int
	for b.Loop() {
		size = get()
	}
	b.ReportMetric(float64(size)/1024, "KB/page")
}

func BenchmarkListFirstPage(b *testing.B) { benchGet(b, "/traces") }
func BenchmarkListByStarted(b *testing.B) { benchGet(b, "/traces?sort=started&desc=1") }
func BenchmarkListFiltered(b *testing.B) {
	benchGet(b, "/traces?model=sim-weak&outcome=failure&mode=FM-2.3")
}
func BenchmarkListBySource(b *testing.B) {
	benchGet(b, "/traces?mode=FM-1.1&source=detector&outcome=success")
}
func BenchmarkListSearchRare(b *testing.B)   { benchGet(b, "/traces?q=checkout-77777") }
func BenchmarkListSearchCommon(b *testing.B) { benchGet(b, "/traces?q=kubectl+crashloopbackoff") }

// A page deep in the list costs what the first one does: the cursor is a
// seek in the index, not an offset.
func BenchmarkListDeepPage(b *testing.B) {
	srv := benchServer(b)
	page, err := srv.cfg.Store.Browse(context.Background(), store.TraceQuery{Limit: bench.n * 9 / 10})
	if err != nil || page.Next == "" {
		b.Fatal(err)
	}
	benchGet(b, "/traces?after="+page.Next)
}

// The dashboard as first viewed, and viewed again while the database is
// unchanged (the report is kept).
func BenchmarkDashboard(b *testing.B)         { benchFirstView(b, "/") }
func BenchmarkDashboardFiltered(b *testing.B) { benchFirstView(b, "/?model=sim-weak&source=judge") }
func BenchmarkDashboardAgain(b *testing.B)    { benchGet(b, "/") }
func BenchmarkTrace10000Steps(b *testing.B)   { benchGet(b, "/traces/bench-long") }
func BenchmarkTrace10000StepsPage(b *testing.B) {
	benchGet(b, "/traces/bench-long/steps?from=5000&dir=next", "HX-Request", "true")
}
func BenchmarkAgreementHuman(b *testing.B) {
	benchFirstView(b, "/agreement?a=human:bench&b=judge:bench&raters=1")
}
func BenchmarkAgreementAgain(b *testing.B) {
	benchGet(b, "/agreement?a=human:bench&b=judge:bench&raters=1")
}
func BenchmarkAgreementJudges(b *testing.B) {
	benchFirstView(b, "/agreement?a=judge:bench&b=detector&raters=1")
}

// The count the list asks for after its page: it reads the whole selection.
func BenchmarkCountAll(b *testing.B) { benchGet(b, "/count") }
func BenchmarkCountFiltered(b *testing.B) {
	benchGet(b, "/count?model=sim-weak&outcome=failure&mode=FM-2.3")
}
func BenchmarkCountBySource(b *testing.B) {
	benchGet(b, "/count?mode=FM-1.1&source=detector&outcome=success")
}
