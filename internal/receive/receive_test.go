package receive

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/faultline/faultline/internal/store/sqlite"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

// memSink keeps the traces it is given, by id.
type memSink struct {
	mu     sync.Mutex
	traces map[string]*trace.Trace
	files  map[string]string // key → hash
}

func newMemSink() *memSink {
	return &memSink{traces: map[string]*trace.Trace{}, files: map[string]string{}}
}

func (m *memSink) File(_ context.Context, f ingest.FileInfo) (ingest.FileSink, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files[f.Path] == f.Hash {
		return nil, nil
	}
	m.files[f.Path] = f.Hash
	return memFile{m}, nil
}

func (m *memSink) get(id string) *trace.Trace {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.traces[id]
}

type memFile struct{ m *memSink }

func (f memFile) Trace(_ context.Context, t *trace.Trace) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	f.m.traces[t.ID] = t
	return nil
}

func (memFile) Close(context.Context, ingest.FileResult) error { return nil }

// running is a receiver serving on a loopback port until stop.
type running struct {
	r    *Receiver
	addr string
	stop func() error
}

func start(t *testing.T, cfg Config) *running {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.Serve(ctx, ln) }()
	stopped := false
	run := &running{r: r, addr: ln.Addr().String()}
	run.stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-served
	}
	t.Cleanup(func() { run.stop() })
	return run
}

// waitFor polls until cond holds or a few seconds pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func kinds(t *trace.Trace) string {
	var out []string
	for _, s := range t.Steps {
		k := string(s.Kind)
		if s.Tool != "" {
			k += ":" + s.Tool
		}
		out = append(out, k)
	}
	return strings.Join(out, " ")
}

// An agent instrumented with the OpenTelemetry Go SDK exports over OTLP/HTTP
// (protobuf, gzip) to the receiver: one run in today's GenAI conventions,
// one in the older ones.
func TestReceiveFromSDKExporter(t *testing.T) {
	sink := newMemSink()
	rcv := start(t, Config{Sink: sink, Source: "test", RootWait: 20 * time.Millisecond})
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(rcv.addr), otlptracehttp.WithInsecure(),
		otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	tracer := tp.Tracer("sre-agent")

	// Today's conventions: invoke_agent → chat → execute_tool → chat.
	actx, agent := tracer.Start(ctx, "invoke_agent sre-agent", oteltrace.WithAttributes(
		attribute.String("gen_ai.operation.name", "invoke_agent"), attribute.String("gen_ai.agent.name", "sre-agent")))
	_, chat := tracer.Start(actx, "chat gpt-4.1", oteltrace.WithSpanKind(oteltrace.SpanKindClient), oteltrace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", "gpt-4.1"),
		attribute.Int("gen_ai.usage.input_tokens", 700), attribute.Int("gen_ai.usage.output_tokens", 30),
		attribute.String("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Why is checkout slow?"}]}]`),
		attribute.String("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"get_metrics","arguments":{"service":"checkout"}}]}]`)))
	chat.End()
	_, tool := tracer.Start(actx, "execute_tool get_metrics", oteltrace.WithAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", "get_metrics"),
		attribute.String("gen_ai.tool.call.id", "c1"), attribute.String("gen_ai.tool.call.result", "p99 latency 4.2s")))
	tool.End()
	_, chat2 := tracer.Start(actx, "chat gpt-4.1", oteltrace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", "gpt-4.1"),
		attribute.String("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"The payment service slows checkout."}]}]`)))
	chat2.End()
	agent.End()

	// The older conventions: gen_ai.system, indexed prompt attributes, and a
	// completion event; a failed tool call.
	lctx, workflow := tracer.Start(ctx, "triage.workflow", oteltrace.WithAttributes(attribute.String("traceloop.span.kind", "workflow")))
	_, llm := tracer.Start(lctx, "openai.chat", oteltrace.WithAttributes(
		attribute.String("gen_ai.system", "openai"), attribute.String("gen_ai.request.model", "gpt-4o-mini"),
		attribute.String("gen_ai.prompt.0.role", "user"), attribute.String("gen_ai.prompt.0.content", "Restart the VPN gateway.")))
	llm.AddEvent("gen_ai.content.completion", oteltrace.WithAttributes(attribute.String("gen_ai.completion",
		`[{"role":"assistant","content":"Restarting it now.","tool_calls":[{"id":"t1","type":"function","function":{"name":"restart","arguments":"{}"}}]}]`)))
	llm.End()
	_, restart := tracer.Start(lctx, "restart.tool", oteltrace.WithAttributes(
		attribute.String("traceloop.span.kind", "tool"), attribute.String("traceloop.entity.name", "restart")))
	restart.RecordError(fmt.Errorf("permission denied"))
	restart.SetStatus(codes.Error, "permission denied")
	restart.End()
	workflow.End()

	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	current := agent.SpanContext().TraceID().String()
	legacy := workflow.SpanContext().TraceID().String()
	waitFor(t, "both traces stored", func() bool { return sink.get(current) != nil && sink.get(legacy) != nil })

	tr := sink.get(current)
	if got := kinds(tr); got != "message tool_call:get_metrics tool_result:get_metrics final" {
		t.Errorf("steps: %s", got)
	}
	if tr.Steps[1].SpanID != chat.SpanContext().SpanID().String() || tr.Steps[2].SpanID != tool.SpanContext().SpanID().String() ||
		tr.Format != "otlp-proto" || tr.Model != "gpt-4.1" || tr.Steps[0].Agent != "sre-agent" {
		t.Errorf("trace %+v", tr)
	}
	tr = sink.get(legacy)
	if got := kinds(tr); got != "message message tool_call:restart tool_result:restart" {
		t.Fatalf("steps: %s", got)
	}
	if s := tr.Steps[3]; !s.IsError || s.Text != "permission denied; *errors.errorString: permission denied" {
		t.Errorf("failed tool: %+v", s)
	}
	if err := rcv.stop(); err != nil {
		t.Fatal(err)
	}
	st := rcv.r.Stats()
	if st.Stored != 2 || st.Spans != 7 || st.OpenTraces != 0 || st.OpenSpans != 0 || st.OpenBytes != 0 {
		t.Errorf("stats %+v", st)
	}
}

func post(t *testing.T, addr, contentType string, body []byte, header ...string) (*http.Response, []byte) {
	t.Helper()
	return postBody(t, addr, contentType, bytes.NewReader(body), int64(len(body)), header...)
}

// postBody posts a body of the given length (-1: unknown, sent chunked).
func postBody(t *testing.T, addr, contentType string, body io.Reader, length int64, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+Path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func sample(t *testing.T) []byte {
	b, err := os.ReadFile("../../ingest/testdata/otlp/genai_current.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReceiveJSON(t *testing.T) {
	sink := newMemSink()
	rcv := start(t, Config{Sink: sink, RootWait: 10 * time.Millisecond})
	resp, body := post(t, rcv.addr, "application/json", gzipped(sample(t)), "Content-Encoding", "gzip")
	if resp.StatusCode != 200 || string(body) != "{}" || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	waitFor(t, "the sample's traces", func() bool {
		return sink.get("4bf92f3577b34da6a3ce929d0e0e4736") != nil && sink.get("5bf92f3577b34da6a3ce929d0e0e4737") != nil
	})
	if tr := sink.get("4bf92f3577b34da6a3ce929d0e0e4736"); len(tr.Steps) != 7 || tr.Format != "otlp-json" {
		t.Errorf("trace: %s", kinds(tr))
	}

	// The same spans again, after their trace was stored: rejected, said so.
	resp, body = post(t, rcv.addr, "application/json", sample(t))
	if rejected, msg, err := partialSuccess(body); err != nil || resp.StatusCode != 200 || rejected != "7" ||
		!strings.Contains(msg, "arrived after their trace was stored") {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
}

// partialSuccess reads the partial success of a JSON response.
func partialSuccess(body []byte) (rejected, message string, err error) {
	var partial struct {
		PartialSuccess struct {
			RejectedSpans string `json:"rejectedSpans"`
			ErrorMessage  string `json:"errorMessage"`
		} `json:"partialSuccess"`
	}
	err = json.Unmarshal(body, &partial)
	return partial.PartialSuccess.RejectedSpans, partial.PartialSuccess.ErrorMessage, err
}

func TestReceiveRefusals(t *testing.T) {
	rcv := start(t, Config{Sink: newMemSink(), MaxSpans: 10, RootWait: time.Hour, IdleTimeout: time.Hour, MaxBodyBytes: 64 << 10})
	proto := func(traces, spansEach int) []byte {
		td := ptrace.NewTraces()
		ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
		for i := range traces {
			for j := range spansEach {
				sp := ss.Spans().AppendEmpty()
				sp.SetTraceID(pcommon.TraceID{byte(i + 1), 1})
				sp.SetSpanID(pcommon.SpanID{byte(j + 1)})
				sp.Attributes().PutStr("gen_ai.operation.name", "chat")
			}
		}
		b, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		return b
	}
	tests := []struct {
		name        string
		contentType string
		body        []byte
		header      []string
		status      int
		message     string
	}{
		{"fits", "application/x-protobuf", proto(2, 4), nil, 200, ""},
		{"would pass the limit", "application/x-protobuf", proto(1, 4), nil, 429, "retry later"},
		{"larger than the limit itself", "application/x-protobuf", proto(3, 4), nil, 413, "exceeds the receiver's limits"},
		{"not OTLP", "application/x-protobuf", []byte("\x0a\x05hello"), nil, 400, "not OTLP traces"},
		{"wrong content type", "text/plain", []byte("hi"), nil, 415, "application/x-protobuf or application/json"},
		{"bad gzip", "application/json", []byte("{}"), []string{"Content-Encoding", "gzip"}, 400, "gzip body"},
		{"other encoding", "application/json", []byte("{}"), []string{"Content-Encoding", "br"}, 415, "send gzip or none"},
		{"too large", "application/json", bytes.Repeat([]byte(" "), 70<<10), nil, 413, "body larger than"},
		{"gzip bomb", "application/json", gzipped(bytes.Repeat([]byte(" "), 1<<20)), []string{"Content-Encoding", "gzip"}, 413, "body larger than"},
	}
	for _, tt := range tests {
		resp, body := post(t, rcv.addr, tt.contentType, tt.body, tt.header...)
		if resp.StatusCode != tt.status || !bytes.Contains(body, []byte(tt.message)) {
			t.Errorf("%s: %d %q", tt.name, resp.StatusCode, body)
		}
		if tt.status == 429 && resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s: no Retry-After", tt.name)
		}
	}
	// An error body is a google.rpc.Status: code (field 1) then message (2).
	_, body := post(t, rcv.addr, "application/x-protobuf", []byte("\x0a\x05hello"))
	if len(body) < 4 || body[0] != 0x08 || body[1] != codeInvalidArgument || body[2] != 0x12 {
		t.Errorf("status body % x", body)
	}
	if st := rcv.r.Stats(); st.OpenTraces != 2 || st.OpenSpans != 8 || st.Throttled != 1 {
		t.Errorf("stats %+v", st)
	}
}

// At shutdown a trace whose root arrived is stored even before RootWait;
// one without a root is not. After IdleTimeout a rootless trace is stored,
// marked incomplete.
func TestReceiveShutdownAndIdle(t *testing.T) {
	rootless, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(func() ptrace.Traces {
		td, _ := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(sample(t))
		spans := td.ResourceSpans().At(0).ScopeSpans().At(1).Spans()
		spans.RemoveIf(func(s ptrace.Span) bool { return s.ParentSpanID().IsEmpty() })
		return td
	}())
	sink := newMemSink()
	rcv := start(t, Config{Sink: sink, RootWait: time.Hour, IdleTimeout: time.Hour})
	if resp, body := post(t, rcv.addr, "application/json", sample(t)); resp.StatusCode != 200 {
		t.Fatal(string(body))
	}
	if err := rcv.stop(); err != nil {
		t.Fatal(err)
	}
	if sink.get("4bf92f3577b34da6a3ce929d0e0e4736") == nil || sink.get("5bf92f3577b34da6a3ce929d0e0e4737") == nil {
		t.Error("complete traces not stored at shutdown")
	}

	sink = newMemSink()
	rcv = start(t, Config{Sink: sink, RootWait: time.Hour, IdleTimeout: time.Hour})
	post(t, rcv.addr, "application/json", rootless)
	rcv.stop()
	if st := rcv.r.Stats(); sink.get("4bf92f3577b34da6a3ce929d0e0e4736") != nil || st.NotStored != 1 || st.Stored != 1 {
		t.Errorf("a trace without its root was stored at shutdown: %+v", st)
	}

	sink = newMemSink()
	rcv = start(t, Config{Sink: sink, RootWait: time.Hour, IdleTimeout: 30 * time.Millisecond})
	post(t, rcv.addr, "application/json", rootless)
	waitFor(t, "the rootless trace", func() bool { return sink.get("4bf92f3577b34da6a3ce929d0e0e4736") != nil })
	if tr := sink.get("4bf92f3577b34da6a3ce929d0e0e4736"); tr.Meta["otel.incomplete"] == "" {
		t.Errorf("meta %v", tr.Meta)
	}
}

// After a restart the receiver no longer knows which traces it stored: late
// spans of one are assembled as a trace of their own, which the store
// refuses, as it has fewer steps than the stored trace. The refusal is
// logged and counted, and the stored trace stays whole.
func TestReceiveLateSpansDoNotCutAStoredTraceShort(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rcv := start(t, Config{Sink: st, RootWait: 10 * time.Millisecond})
	post(t, rcv.addr, "application/json", sample(t))
	waitFor(t, "the sample's traces", func() bool { return rcv.r.Stats().Stored == 2 })
	if err := rcv.stop(); err != nil {
		t.Fatal(err)
	}

	// The stored trace's tool span, arriving late.
	tool := pcommon.SpanID{0x2b, 0x3c, 0x4d, 0x5e, 0x6f, 0x70, 0x81, 0x92}
	late, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(func() ptrace.Traces {
		td, _ := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(sample(t))
		td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
			rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
				ss.Spans().RemoveIf(func(s ptrace.Span) bool { return s.SpanID() != tool })
				return ss.Spans().Len() == 0
			})
			return rs.ScopeSpans().Len() == 0
		})
		return td
	}())
	var logs bytes.Buffer // written by the receiver's goroutines, read once they have stopped
	var stored []string
	rcv = start(t, Config{Sink: st, RootWait: time.Hour, IdleTimeout: 20 * time.Millisecond,
		Log: slog.New(slog.NewTextHandler(&logs, nil)), Stored: func(t *trace.Trace) { stored = append(stored, t.ID) }})
	if resp, body := post(t, rcv.addr, "application/json", late); resp.StatusCode != 200 {
		t.Fatal(string(body))
	}
	waitFor(t, "the late spans to be handled", func() bool { return rcv.r.Stats().NotStored == 1 })
	if err := rcv.stop(); err != nil {
		t.Fatal(err)
	}
	if s := rcv.r.Stats(); s.Stored != 0 || len(stored) != 0 {
		t.Errorf("the late spans were stored: %+v %v", s, stored)
	}
	if tr, err := st.Load(ctx, id); err != nil || len(tr.Steps) != 7 {
		t.Errorf("stored trace: %v, %d steps, want 7", err, len(tr.Steps))
	}
	if !strings.Contains(logs.String(), "trace not stored: the sink refused it") || !strings.Contains(logs.String(), "7 steps are stored") {
		t.Errorf("the refusal is not logged:\n%s", logs.String())
	}
}
