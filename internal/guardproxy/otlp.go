package guardproxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/faultline/faultline/guard"
	"github.com/faultline/faultline/internal/export"
	"github.com/faultline/faultline/trace"
)

// Of the OTLP export of decisions.
const (
	// otlpBatch is the most decisions one post carries; a queue that holds
	// as many is posted at once, else what it holds every otlpEvery.
	otlpBatch = 100
	otlpEvery = time.Second
	// otlpQueue bounds the decisions waiting to be posted: an endpoint
	// that is down or slow costs decisions, not the proxy's memory.
	otlpQueue = 10_000
	// otlpTimeout bounds one post.
	otlpTimeout = 10 * time.Second
)

// exportDecisions queues a session's new decisions for the OTLP endpoint,
// each as the document faultline export writes for a finding. They are
// built now, under the session's lock, from the run as it stands: the
// finding's span is that of the step it cites, its trace the agent's when
// the session is named by a traceparent, and its span (signal "spans")
// numbered as the stored run's findings are.
func (p *Proxy) exportDecisions(e *entry, ds []guard.Decision) {
	first := len(e.s.Decisions()) - len(ds)
	for i, d := range ds {
		t := &trace.Trace{ID: e.s.ID, Ended: d.Time, Steps: e.s.Steps(), Findings: []trace.Finding{finding(d)}}
		if id, ok := strings.CutPrefix(e.key, "trace-"); ok {
			t.SetMeta("otel.trace_id", id)
		}
		var doc otlpDoc
		if p.otlp.spans {
			doc.spans = export.Spans(t, first+i)
		} else {
			doc.logs = export.Logs(t)
		}
		p.otlp.put(doc)
	}
}

// otlpDoc is one decision's document, of the signal the exporter posts.
type otlpDoc struct {
	logs  plog.Logs
	spans ptrace.Traces
}

// otlpExporter posts decisions to an OTLP/HTTP endpoint as JSON, in
// batches, in the background: a request never waits for it. A batch that
// fails is logged and counted, not retried.
type otlpExporter struct {
	url   string // the endpoint, the signal's path included
	spans bool
	http  *http.Client
	log   *slog.Logger
	// ctx ends the posts in flight when close gives up waiting.
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	queue  []otlpDoc
	limit  int
	closed bool
	full   chan struct{}
	stop   chan struct{}
	done   chan struct{}

	sent, failed, dropped atomic.Int64
}

// startOTLP starts posting to endpoint's /v1/logs, or /v1/traces when
// spans.
func startOTLP(endpoint string, spans bool, client *http.Client, log *slog.Logger) *otlpExporter {
	path := "/v1/logs"
	if spans {
		path = "/v1/traces"
	}
	ctx, cancel := context.WithCancel(context.Background())
	x := &otlpExporter{
		url: strings.TrimSuffix(endpoint, "/") + path, spans: spans, http: client, log: log,
		ctx: ctx, cancel: cancel, limit: otlpQueue,
		full: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go x.loop()
	return x
}

// put queues a decision's document, or drops it when the queue is full.
func (x *otlpExporter) put(doc otlpDoc) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed || len(x.queue) >= x.limit {
		x.dropped.Add(1)
		return
	}
	x.queue = append(x.queue, doc)
	if len(x.queue) >= otlpBatch {
		select {
		case x.full <- struct{}{}:
		default:
		}
	}
}

func (x *otlpExporter) loop() {
	defer close(x.done)
	tick := time.NewTicker(otlpEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-x.full:
		case <-x.stop:
			x.post()
			return
		}
		x.post()
	}
}

// post sends what is queued, a batch at a time.
func (x *otlpExporter) post() {
	for {
		x.mu.Lock()
		n := min(len(x.queue), otlpBatch)
		batch := x.queue[:n:n]
		x.queue = x.queue[n:]
		x.mu.Unlock()
		if n == 0 {
			return
		}
		if err := x.send(batch); err != nil {
			x.failed.Add(int64(n))
			x.log.Warn("guard decisions not exported", "endpoint", x.url, "decisions", n, "err", err)
			continue
		}
		x.sent.Add(int64(n))
	}
}

// send posts one batch as one document.
func (x *otlpExporter) send(batch []otlpDoc) error {
	body, err := x.marshal(batch)
	if err != nil {
		return fmt.Errorf("writing the OTLP document: %w", err)
	}
	ctx, cancel := context.WithTimeout(x.ctx, otlpTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("OTLP request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := x.http.Do(req)
	if err != nil {
		return fmt.Errorf("posting to the OTLP endpoint: %w", err)
	}
	defer resp.Body.Close()
	// Read so that the connection is kept.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the OTLP endpoint answered %s", resp.Status)
	}
	return nil
}

// marshal makes a batch one document. Each decision's holds one resource
// and one scope (see export.Logs and export.Spans): the batch's are the
// first's, the others' records moved into its scope.
func (x *otlpExporter) marshal(batch []otlpDoc) ([]byte, error) {
	if x.spans {
		td := batch[0].spans
		into := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
		for _, d := range batch[1:] {
			d.spans.ResourceSpans().At(0).ScopeSpans().At(0).Spans().MoveAndAppendTo(into)
		}
		return (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	}
	ld := batch[0].logs
	into := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for _, d := range batch[1:] {
		d.logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().MoveAndAppendTo(into)
	}
	return (&plog.JSONMarshaler{}).MarshalLogs(ld)
}

// close posts what is queued and stops, or gives up when ctx ends.
func (x *otlpExporter) close(ctx context.Context) error {
	// Once done, or given up on, the posts in flight end.
	defer x.cancel()
	x.mu.Lock()
	if !x.closed {
		x.closed = true
		close(x.stop)
	}
	x.mu.Unlock()
	select {
	case <-x.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("exporting the guard's decisions: %w", ctx.Err())
	}
}
