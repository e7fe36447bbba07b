package receive

import (
	"bytes"
	"context"
	"flag"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/faultline/faultline/internal/pipeline"
	"github.com/faultline/faultline/internal/receive/receivetest"
	"github.com/faultline/faultline/internal/store/sqlite"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/ingest/otel"
	"github.com/faultline/faultline/trace"
)

var (
	benchStore    = flag.Bool("receive.store", false, "BenchmarkReceive: store through the detectors into SQLite instead of discarding")
	benchRequests = flag.Int("receive.requests", 400, "BenchmarkReceive: requests per iteration (each 10 traces of 10 spans)")
	benchClients  = flag.Int("receive.clients", 4, "BenchmarkReceive: concurrent clients")
	benchGroup    = flag.Bool("receive.group", true, "BenchmarkReceive with -receive.store: store as faultline receive does (traces mapped and detected ahead on every core, sharing commits through a sqlite.Batch that late spans are merged through); false: one commit per trace, detected in the sink, merged through the Store")
)

// countSink counts the traces it is given and keeps none.
type countSink struct{ traces atomic.Int64 }

func (c *countSink) File(context.Context, ingest.FileInfo) (ingest.FileSink, error) {
	return countFile{c}, nil
}

type countFile struct{ c *countSink }

func (f countFile) Trace(context.Context, *trace.Trace) error {
	f.c.traces.Add(1)
	return nil
}

func (countFile) Close(context.Context, ingest.FileResult) error { return nil }

// BenchmarkReceive measures the receiver end to end on loopback: requests
// of 100 spans from concurrent clients, until every trace is assembled and
// handed on (discarded, or with -receive.store mapped, run through the
// detectors and stored in SQLite). It reports spans per second.
func BenchmarkReceive(b *testing.B) {
	template := receivetest.Template()
	counter := &countSink{}
	cfg := Config{Sink: counter, RootWait: 5 * time.Millisecond}
	var st *sqlite.Store
	if *benchStore {
		var err error
		st, err = sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		cfg.Sink, cfg.Loader = pipeline.Detecting(st, detect.All, func(error) {}), st
		if *benchGroup {
			batch := st.Batch()
			defer batch.Close(context.Background())
			cfg.Sink, cfg.Loader, cfg.Commit, cfg.Detect = batch, batch, batch.Commit, Detectors(detect.All, func(error) {})
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	r := New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String() + Path
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *benchClients}}

	n, spans := 0, 0
	b.SetBytes(int64(len(template)) * int64(*benchRequests))
	start := time.Now()
	for b.Loop() {
		var wg sync.WaitGroup
		next := make(chan []byte)
		for range *benchClients {
			wg.Go(func() {
				for body := range next {
					for {
						resp, err := client.Post(url, "application/x-protobuf", bytes.NewReader(body))
						if err != nil {
							b.Error(err)
							return
						}
						resp.Body.Close()
						if resp.StatusCode == http.StatusOK {
							break
						}
						time.Sleep(5 * time.Millisecond) // 429: the store is behind
					}
				}
			})
		}
		for range *benchRequests {
			next <- receivetest.Request(template, n)
			n++
		}
		close(next)
		wg.Wait()
		spans += *benchRequests * 100
		want := int64(n * 10)
		for r.Stats().Stored < want {
			time.Sleep(time.Millisecond)
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(spans)/elapsed.Seconds(), "spans/s")
	b.ReportMetric(0, "ns/op")
	cancel()
	if err := <-served; err != nil {
		b.Fatal(err)
	}
	if s := r.Stats(); s.Throttled > 0 {
		b.Logf("%d requests throttled while the store caught up", s.Throttled)
	}
	if st != nil {
		// The Store's own commits, the first part of its revision.
		rev, err := st.Revision(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		commits, _, _ := strings.Cut(rev, ".")
		b.Logf("%d traces stored in %s commits", n*10, commits)
	}
	if !*benchStore && counter.traces.Load() != int64(n*10) {
		b.Fatalf("%d traces handed on, want %d", counter.traces.Load(), n*10)
	}
}

// BenchmarkOpenTraceMemory measures the heap an open trace holds (the
// template's runs: 10 spans, about 9 KB of GenAI attributes each) next to
// what the limits count for it (otel.Span.Size).
func BenchmarkOpenTraceMemory(b *testing.B) {
	const traces = 2000
	template := receivetest.Template()
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r := New(Config{Sink: &countSink{}, MaxTraces: traces, MaxSpans: traces * 10, MaxBytes: 1 << 40})
		for n := range traces / 10 {
			td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(receivetest.Request(template, n))
			if err != nil {
				b.Fatal(err)
			}
			if a := r.accept(otel.Spans(td, func(string, error) {}), "otlp-proto", time.Now(), r.admit(), false); a.refused != nil {
				b.Fatal("refused")
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		st := r.Stats()
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/traces, "heap-bytes/trace")
		b.ReportMetric(float64(st.OpenBytes)/traces, "counted-bytes/trace")
		b.ReportMetric(0, "ns/op")
		runtime.KeepAlive(r)
	}
}
