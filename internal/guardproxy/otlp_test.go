package guardproxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/faultline/faultline/guard"
	"github.com/faultline/faultline/internal/export"
	"github.com/faultline/faultline/internal/receive"
)

// otlpEndpoint is an OTLP/HTTP endpoint that keeps what it is posted and
// answers with answer (200 when nil).
type otlpEndpoint struct {
	*httptest.Server
	mu     sync.Mutex
	paths  []string
	bodies [][]byte
}

func newOTLPEndpoint(t *testing.T, answer http.HandlerFunc) *otlpEndpoint {
	o := &otlpEndpoint{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		o.mu.Lock()
		o.paths = append(o.paths, r.URL.Path)
		o.bodies = append(o.bodies, body)
		o.mu.Unlock()
		if answer != nil {
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			answer(w, r)
		}
	}))
	t.Cleanup(o.Close)
	return o
}

// logs decodes every document posted, as an OTLP collector would.
func (o *otlpEndpoint) logs(t *testing.T) []plog.Logs {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []plog.Logs
	for i, body := range o.bodies {
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalJSON(body); err != nil {
			t.Fatalf("post %d to %s is not OTLP logs: %v", i, o.paths[i], err)
		}
		if o.paths[i] != "/v1/logs" {
			t.Errorf("posted to %s, want /v1/logs", o.paths[i])
		}
		out = append(out, req.Logs())
	}
	return out
}

// ambiguity is a rule that annotates every session whose task says
// "either".
func ambiguity() *guard.Rule {
	return &guard.Rule{Name: "ambiguous", Mode: "FM-2.2", Signals: []*regexp.Regexp{regexp.MustCompile(`either`)}, Action: guard.Annotate}
}

func closeProxy(t *testing.T, p *Proxy) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestGuardOTLPLogs(t *testing.T) {
	o := newOTLPEndpoint(t, nil)
	up := newUpstream(t, answers("on it"))
	p, srv := startProxy(t, up.URL, Config{Policy: policy(ambiguity()), OTLP: o.URL + "/"})
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	post(t, srv.URL, request(false, "user", "fix either a or b"), "traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	closeProxy(t, p)
	docs := o.logs(t)
	if len(docs) != 1 || docs[0].LogRecordCount() != 1 {
		t.Fatalf("%d documents posted, want one of one record", len(docs))
	}
	lr := docs[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	attr := func(k string) string { v, _ := lr.Attributes().Get(k); return v.AsString() }
	if lr.EventName() != export.EventName || lr.TraceID().String() != traceID || attr("faultline.trace_id") != "guard:trace-"+traceID ||
		attr("faultline.mode") != "FM-2.2" || attr("faultline.source") != Source || !strings.Contains(attr("gen_ai.evaluation.explanation"), "ambiguous (annotate)") {
		t.Errorf("record %s of trace %s with attributes %v; want the decision, in the agent's trace", lr.EventName(), lr.TraceID(), lr.Attributes().AsRaw())
	}
	if s := p.Stats(); s.OTLPSent != 1 || s.OTLPFailed != 0 || s.OTLPDropped != 0 {
		t.Errorf("stats %+v, want one decision sent", s)
	}
}

func TestGuardOTLPBatches(t *testing.T) {
	o := newOTLPEndpoint(t, nil)
	up := newUpstream(t, answers("on it"))
	p, srv := startProxy(t, up.URL, Config{Policy: policy(ambiguity()), OTLP: o.URL})
	const n = otlpBatch + 50
	for i := range n {
		post(t, srv.URL, request(false, "user", "fix either a or b"), SessionHeader, strconv.Itoa(i))
	}
	closeProxy(t, p)
	docs := o.logs(t)
	total := 0
	for _, d := range docs {
		if d.LogRecordCount() > otlpBatch || d.ResourceLogs().Len() != 1 {
			t.Errorf("a post of %d records in %d resources, want at most %d in one", d.LogRecordCount(), d.ResourceLogs().Len(), otlpBatch)
		}
		total += d.LogRecordCount()
	}
	if len(docs) < 2 || total != n || p.Stats().OTLPSent != n {
		t.Errorf("%d records in %d posts, %d counted sent; want %d in batches", total, len(docs), p.Stats().OTLPSent, n)
	}
}

func TestGuardOTLPNeverBlocks(t *testing.T) {
	got, release := make(chan struct{}, 1), make(chan struct{})
	o := newOTLPEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- struct{}{}:
		default:
		}
		<-release
		w.WriteHeader(http.StatusInternalServerError)
	})
	up := newUpstream(t, answers("on it"))
	p, srv := startProxy(t, up.URL, Config{Policy: policy(ambiguity()), OTLP: o.URL})
	post(t, srv.URL, request(false, "user", "fix either a or b"), SessionHeader, "first")
	<-got
	// The endpoint holds the first post: the requests go on all the same.
	for i := range 2 {
		if resp, _ := post(t, srv.URL, request(false, "user", "fix either a or b"), SessionHeader, strconv.Itoa(i)); resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
	}
	p.otlp.mu.Lock()
	p.otlp.limit = 0
	p.otlp.mu.Unlock()
	post(t, srv.URL, request(false, "user", "fix either a or b"), SessionHeader, "full")
	close(release)
	closeProxy(t, p)
	if s := p.Stats(); s.OTLPSent != 0 || s.OTLPFailed != 3 || s.OTLPDropped != 1 {
		t.Errorf("stats %+v; want 3 decisions failed, 1 dropped", s)
	}
}

// faultline receive's handler takes the spans the guard posts.
func TestGuardOTLPSpansToReceive(t *testing.T) {
	rcv := receive.New(receive.Config{})
	var mu sync.Mutex
	var status []int
	o := newOTLPEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		rcv.ServeHTTP(rec, r)
		mu.Lock()
		status = append(status, rec.Code)
		mu.Unlock()
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
	up := newUpstream(t, answers("on it"))
	p, srv := startProxy(t, up.URL, Config{Policy: policy(ambiguity()), OTLP: o.URL, OTLPSpans: true})
	for _, id := range []string{"a", "b"} {
		post(t, srv.URL, request(false, "user", "fix either a or b"), SessionHeader, id)
	}
	closeProxy(t, p)
	o.mu.Lock()
	defer o.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	if len(o.bodies) != 1 || o.paths[0] != receive.Path || len(status) != 1 || status[0] != http.StatusOK {
		t.Fatalf("posted to %v, answered %v; want one post to %s, answered 200", o.paths, status, receive.Path)
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalJSON(o.bodies[0]); err != nil {
		t.Fatal(err)
	}
	spans := req.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	if spans.Len() != 2 || spans.At(0).Name() != export.EventName || spans.At(0).ParentSpanID().IsEmpty() || spans.At(0).TraceID() == spans.At(1).TraceID() {
		t.Errorf("%d spans posted, want one a session's decision, each under the step it cites, in its session's trace", spans.Len())
	}
	if s := rcv.Stats(); s.Spans != 2 || s.RejectedSpans != 0 {
		t.Errorf("receive took %d spans, rejected %d; want both taken", s.Spans, s.RejectedSpans)
	}
}
