package ingest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/faultline/faultline/ingest/internal/oteltest"
	"github.com/faultline/faultline/trace"
)

// decodeBytes runs a format over in-memory content.
func decodeBytes(t testing.TB, f Format, data []byte) ([]*trace.Trace, []Issue) {
	t.Helper()
	return decodeWith(t, f, "sample", bytes.NewReader(data))
}

func readSample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "otlp", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func otlpIssues(issues []Issue) string {
	var out []string
	for _, i := range issues {
		out = append(out, i.Severity.String()+" "+i.String())
	}
	return strings.Join(out, "\n")
}

func TestOTLPGenAICurrent(t *testing.T) {
	traces, issues := decodeBytes(t, OTLPJSON{}, readSample(t, "genai_current.json"))
	if len(issues) > 0 || len(traces) != 2 {
		t.Fatalf("%d traces, issues:\n%s", len(traces), otlpIssues(issues))
	}
	a := traces[0]
	want := `0 message system @sre-agent [1a2b3c4d5e6f7081] You are an SRE agent. Diagnose the incident and ci…
1 message user @sre-agent [1a2b3c4d5e6f7081] Checkout latency spiked at 14:02. Find the root ca…
2 message assistant @sre-agent [1a2b3c4d5e6f7081] I will look at the firing alerts first.
3 tool_call assistant @sre-agent get_alerts({"namespace":"otel-demo"}) #call_alerts_1 tokens=41 [1a2b3c4d5e6f7081] 
4 tool_result tool @sre-agent get_alerts() #call_alerts_1 [2b3c4d5e6f708192] [{"alert":"HighLatency","service":"checkout","sinc…
5 reasoning assistant @sre-agent [3c4d5e6f708192a3] The alert names checkout; the flag config changed …
6 final assistant @sre-agent tokens=88 [3c4d5e6f708192a3] Root cause: the flagd-config ConfigMap enabled pay…
`
	if got := oteltest.Steps(a); got != want {
		t.Errorf("steps:\n%s\nwant:\n%s", got, want)
	}
	if a.ID != "4bf92f3577b34da6a3ce929d0e0e4736" || a.Format != "otlp-json" || a.System != "sre-agent" || a.Model != "gpt-4.1-2025-04-14" ||
		a.Task != "Checkout latency spiked at 14:02. Find the root cause." || a.Meta["session_id"] != "conv-7" ||
		a.Meta["otel.trace_id"] != a.ID || a.Meta["otel.conventions"] != "gen_ai" || a.Meta["gen_ai.provider"] != "openai" {
		t.Errorf("trace: %+v", a)
	}
	if a.Usage != (trace.Usage{InputTokens: 1842, OutputTokens: 129, TotalTokens: 1971}) {
		t.Errorf("usage %+v", a.Usage)
	}
	if a.Started != time.Unix(1767225600, 0).UTC() || a.Ended != time.Unix(1767225609, 0).UTC() || a.Steps[4].Time != time.Unix(1767225602, 400e6).UTC() {
		t.Errorf("times %s %s %s", a.Started, a.Ended, a.Steps[4].Time)
	}

	b := traces[1]
	want = `0 message user @sre-agent [50f067aa0ba902b8] Cart service returns 500s. Find the root cause.
1 error harness @sre-agent ! [51f067aa0ba902b9] chat gpt-4.1 failed: 429 Too Many Requests; openai…
2 error harness @sre-agent ! [50f067aa0ba902b8] invoke_agent sre-agent failed: agent run failed
`
	if got := oteltest.Steps(b); got != want {
		t.Errorf("steps:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(b.Steps[1].Text, "Rate limit reached for gpt-4.1") {
		t.Errorf("exception message missing: %s", b.Steps[1].Text)
	}
	if o := trace.PrimaryOutcome(b.Outcomes); o == nil || o.Source != "format" || *o.Success || o.Detail != "agent run failed" {
		t.Errorf("outcome %+v", b.Outcomes)
	}
}

func TestOTLPGenAILegacy(t *testing.T) {
	traces, issues := decodeBytes(t, OTLPJSON{}, readSample(t, "genai_legacy.jsonl"))
	if got := otlpIssues(issues); got != "notice sample:2: trace 7df92f3577b34da6a3ce929d0e0e4739: no LLM, tool or agent spans (GenAI, OpenInference or OpenLLMetry); not stored" {
		t.Errorf("issues:\n%s", got)
	}
	if len(traces) != 1 {
		t.Fatalf("%d traces", len(traces))
	}
	tr := traces[0]
	want := `0 message system [6100000000000002] You triage IT support tickets.
1 message user [6100000000000002] What is the status of ticket T-1042?
2 tool_call assistant lookup_ticket({"id": "T-1042"}) #call_9 tokens=18 [6100000000000002] 
3 tool_result tool lookup_ticket() #call_9 [6100000000000003] {"status": "open", "title": "VPN drops every 10 mi…
4 final assistant tokens=24 [6100000000000004] Ticket T-1042 is open: the VPN drops every 10 minu…
`
	if got := oteltest.Steps(tr); got != want {
		t.Errorf("steps:\n%s\nwant:\n%s", got, want)
	}
	if tr.System != "triage-bot" || tr.Model != "gpt-4o-mini-2024-07-18" || tr.Meta["models"] != "" || tr.Meta["otel.conventions"] != "gen_ai-legacy" ||
		tr.Usage != (trace.Usage{InputTokens: 280, OutputTokens: 42, TotalTokens: 322}) {
		t.Errorf("trace: %+v", tr)
	}
}

func TestOTLPOpenInference(t *testing.T) {
	traces, issues := decodeBytes(t, OTLPJSON{}, readSample(t, "openinference.json"))
	if len(issues) > 0 || len(traces) != 1 {
		t.Fatalf("%d traces, issues:\n%s", len(traces), otlpIssues(issues))
	}
	tr := traces[0]
	want := `0 message user @ResearchAgent [8100000000000001] What is the capital of the country with the larges…
1 message system @ResearchAgent [8100000000000002] Answer with evidence from search.
2 tool_call assistant @ResearchAgent web_search({"query": "largest population Africa"}) #toolu_01 tokens=25 [8100000000000002] 
3 tool_result tool @ResearchAgent web_search() #toolu_01 [8100000000000003] Nigeria has the largest population in Africa (abou…
4 tool_call assistant @ResearchAgent fetch_page({"url": "https://en.wikipedia.org/wiki/Nigeria"}) #span:8100000000000004 [8100000000000004] 
5 tool_result tool @ResearchAgent fetch_page() #span:8100000000000004 ! [8100000000000004] TimeoutError: page fetch timed out after 10s
6 message assistant @ResearchAgent tokens=20 [8100000000000005] Nigeria is the most populous country in Africa; it…
7 final assistant @ResearchAgent [8100000000000001] Abuja
`
	if got := oteltest.Steps(tr); got != want {
		t.Errorf("steps:\n%s\nwant:\n%s", got, want)
	}
	if tr.System != "phoenix-demo" || tr.Model != "claude-sonnet-4" || tr.Meta["session_id"] != "sess-42" || tr.Meta["otel.conventions"] != "openinference" ||
		tr.Usage != (trace.Usage{InputTokens: 710, OutputTokens: 45, TotalTokens: 755}) {
		t.Errorf("trace: %+v", tr)
	}
}

// toProto re-encodes OTLP/JSON records as protobuf messages.
func toProto(t testing.TB, records ...[]byte) [][]byte {
	t.Helper()
	var out [][]byte
	for _, r := range records {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(r)
		if err != nil {
			t.Fatal(err)
		}
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// framed writes messages as the collector's file exporter does.
func framed(msgs ...[]byte) []byte {
	var b []byte
	for _, m := range msgs {
		b = binary.BigEndian.AppendUint32(b, uint32(len(m)))
		b = append(b, m...)
	}
	return b
}

func sampleRecords(t testing.TB, name string) [][]byte {
	var out [][]byte
	for _, line := range bytes.Split(readSample(t, name), []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			out = append(out, line)
		}
	}
	if !strings.HasSuffix(name, ".jsonl") {
		out = [][]byte{readSample(t, name)}
	}
	return out
}

func tracesJSON(t testing.TB, traces []*trace.Trace) string {
	for _, tr := range traces {
		tr.Format = ""
	}
	b, err := json.MarshalIndent(traces, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The protobuf files of the same spans give the same traces as the JSON ones.
func TestOTLPProtoSameAsJSON(t *testing.T) {
	for _, name := range []string{"genai_current.json", "genai_legacy.jsonl", "openinference.json"} {
		records := sampleRecords(t, name)
		fromJSON, jsonIssues := decodeBytes(t, OTLPJSON{}, readSample(t, name))
		msgs := toProto(t, records...)
		inputs := map[string][]byte{"framed": framed(msgs...)}
		if len(msgs) == 1 {
			inputs["bare"] = msgs[0]
		}
		for kind, data := range inputs {
			if !(OTLPProto{}).Sniff(data) || (OTLPJSON{}).Sniff(data) {
				t.Errorf("%s %s: not sniffed as otlp-proto", name, kind)
			}
			fromProto, issues := decodeBytes(t, OTLPProto{}, data)
			if len(issues) != len(jsonIssues) {
				t.Errorf("%s %s: issues %s, want as many as %s", name, kind, otlpIssues(issues), otlpIssues(jsonIssues))
			}
			if fromProto[0].Format != "otlp-proto" {
				t.Errorf("format %s", fromProto[0].Format)
			}
			if got, want := tracesJSON(t, fromProto), tracesJSON(t, fromJSON); got != want {
				t.Errorf("%s %s: traces differ from JSON's:\n%s\nwant\n%s", name, kind, got, want)
			}
		}
	}
}

func TestOTLPSniff(t *testing.T) {
	current := readSample(t, "genai_current.json")
	proto := toProto(t, current)[0]
	firstSpanID := []byte{0x3c, 0x4d, 0x5e, 0x6f, 0x70, 0x81, 0x92, 0xa3}
	afterIDs := bytes.Index(proto, firstSpanID) + len(firstSpanID)

	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{1})
	sp.SetSpanID(pcommon.SpanID{1})
	sp.Attributes().PutStr("gen_ai.input.messages", strings.Repeat("x", 2*SniffSize))
	bigSpan, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)

	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTraceID(pcommon.TraceID{1})
	lr.SetSpanID(pcommon.SpanID{1})
	lr.SetEventName("gen_ai.evaluation.result")
	lr.Body().SetStr("a log")
	logs, _ := (&plog.ProtoMarshaler{}).MarshalLogs(ld)

	md := pmetric.NewMetrics()
	m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("gen_ai.client.token.usage")
	m.SetEmptyGauge().DataPoints().AppendEmpty().SetIntValue(3)
	metrics, _ := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	tests := []struct {
		name      string
		head      []byte
		json, pbf bool
	}{
		{"pretty JSON", current, true, false},
		{"JSON lines", readSample(t, "genai_legacy.jsonl"), true, false},
		{"snake_case JSON", []byte(`{"resource_spans": []}`), true, false},
		{"JSON cut short", current[:300], true, false},
		{"OTLP logs", []byte(`{"resourceLogs":[{"scopeLogs":[]}]}`), false, false},
		{"codex", []byte(`{"timestamp":"2026-01-15T16:08:40Z","type":"session_meta","payload":{"id":"x"}}`), false, false},
		{"protobuf", proto, false, true},
		{"protobuf framed", framed(proto), false, true},
		{"protobuf cut after the first span's ids", proto[:afterIDs], false, true},
		{"protobuf cut inside the first span", proto[:40], false, true},
		{"protobuf cut before any span", proto[:8], false, false},
		{"protobuf of a span larger than the head", bigSpan[:SniffSize], false, true},
		{"OTLP logs protobuf", logs, false, false},
		{"OTLP metrics protobuf", metrics, false, false},
		{"empty message", []byte{0x0A, 0x00}, false, false},
		{"another protobuf", []byte{0x0A, 0x03, 'a', 'b', 'c', 0x12, 0x01, 'x'}, false, false},
		{"span ids of the wrong size", []byte{0x0A, 0x0A, 0x12, 0x08, 0x12, 0x06, 0x0A, 0x02, 1, 2, 0x12, 0x00}, false, false},
		{"zip", []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00"), false, false},
		{"newline", []byte("\n\n"), false, false},
	}
	for _, tt := range tests {
		if got := (OTLPJSON{}).Sniff(tt.head); got != tt.json {
			t.Errorf("%s: OTLPJSON.Sniff = %v", tt.name, got)
		}
		if got := (OTLPProto{}).Sniff(tt.head); got != tt.pbf {
			t.Errorf("%s: OTLPProto.Sniff = %v", tt.name, got)
		}
	}
}

// A protobuf file goes through Paths like any other, NUL bytes and all.
func TestOTLPProtoFileIngest(t *testing.T) {
	dir := t.TempDir()
	msgs := toProto(t, sampleRecords(t, "genai_legacy.jsonl")...)
	p := write(t, dir, "traces.binpb", string(framed(msgs...)))
	sink := newMemSink()
	var issues []Issue
	sum, err := Paths(t.Context(), []string{p}, sink, Options{Report: func(i Issue) { issues = append(issues, i) }})
	if err != nil || sum.Files != 1 || sum.Traces != 1 || sum.Errors != 0 {
		t.Fatalf("sum %+v err %v issues %s", sum, err, otlpIssues(issues))
	}
	if tr := sink.traces["6cf92f3577b34da6a3ce929d0e0e4738"]; tr == nil || tr.Format != "otlp-proto" || len(tr.Steps) != 5 {
		t.Errorf("trace %+v", tr)
	}
}

func TestOTLPJSONBadInput(t *testing.T) {
	lines := sampleRecords(t, "genai_legacy.jsonl")
	badID := bytes.Replace(lines[0], []byte(`"spanId":"6100000000000003"`), []byte(`"spanId":"61zz"`), 1)
	noID := bytes.Replace(lines[1], []byte(`"spanId":"6100000000000004",`), nil, 1)
	content := bytes.Join([][]byte{badID, []byte(`{"resourceSpans": [`), noID, []byte(`[1, 2]`), []byte(`{"resourceLogs": []}`)}, []byte("\n"))
	traces, issues := decodeBytes(t, OTLPJSON{}, content)
	got := otlpIssues(issues)
	for _, want := range []string{
		"error sample:1: resourceSpans[0].scopeSpans[0].spans[1]: ",
		"error sample:2: not valid JSON (",
		`error sample:3: resourceSpans[0].scopeSpans[0].spans[0]: span "openai.chat" has no trace id or span id; span skipped`,
		"error sample:4: not OTLP traces (",
		"notice sample:5: no spans in this record",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("issues lack %q:\n%s", want, got)
		}
	}
	// The good spans of the damaged records are kept: the first LLM call and
	// the workflow root; the tool span and the second LLM call are lost.
	if len(traces) != 1 || len(traces[0].Steps) != 3 {
		t.Fatalf("traces %d:\n%s", len(traces), oteltest.Steps(traces[0]))
	}

	// A pretty-printed document with a syntax error: what is before it is
	// located, and the rest is reported once.
	doc := readSample(t, "openinference.json")
	broken := append(bytes.Clone(doc[:len(doc)-40]), []byte("}}}]]]\n")...)
	_, issues = decodeBytes(t, OTLPJSON{}, broken)
	if len(issues) != 1 || !strings.Contains(issues[0].String(), "not valid JSON") || issues[0].Line < 10 {
		t.Errorf("issues: %s", otlpIssues(issues))
	}
}

func TestOTLPProtoBadInput(t *testing.T) {
	msgs := toProto(t, sampleRecords(t, "genai_legacy.jsonl")...)
	// Damage the second span of the first message: its trace id becomes 3
	// bytes long, which pdata refuses.
	first := msgs[0]
	tid := []byte{0x0A, 0x10, 0x6c, 0xf9, 0x2f, 0x35}
	at := bytes.Index(first[bytes.Index(first, tid)+1:], tid) + bytes.Index(first, tid) + 1
	damaged := bytes.Clone(first)
	damaged[at+1] = 0x03
	data := framed(damaged, msgs[1])
	data = append(data, 0, 0, 0, 50, 0x0A) // a last message cut short
	traces, issues := decodeBytes(t, OTLPProto{}, data)
	got := otlpIssues(issues)
	for _, want := range []string{
		"error sample: message 1 (byte 0): resourceSpans[0].scopeSpans[0].spans[1]: ",
		"error sample: message 3 (byte ",
		"the file ends inside it",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("issues lack %q:\n%s", want, got)
		}
	}
	if len(traces) != 1 || len(traces[0].Steps) != 5 {
		t.Fatalf("traces %d", len(traces))
	}
	// The tool span was lost, so its result comes from the next LLM call's
	// input, as a result without a tool span.
	if s := traces[0].Steps[3]; s.Kind != trace.KindToolResult || s.SpanID != "6100000000000004" {
		t.Errorf("step 3: %+v", s)
	}
}

// The fuzz seeds are the samples' spans one at a time: the fuzzer minimises
// every input it finds interesting, which takes minutes on whole samples.
func otlpSeedSpans(t testing.TB) [][]byte {
	var out [][]byte
	for _, name := range []string{"genai_current.json", "genai_legacy.jsonl", "openinference.json"} {
		for _, rec := range sampleRecords(t, name) {
			td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(rec)
			if err != nil {
				t.Fatal(err)
			}
			for _, rs := range td.ResourceSpans().All() {
				for _, ss := range rs.ScopeSpans().All() {
					for _, sp := range ss.Spans().All() {
						one := ptrace.NewTraces()
						sp.CopyTo(one.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty())
						b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(one)
						if err != nil {
							t.Fatal(err)
						}
						out = append(out, b)
					}
				}
			}
		}
	}
	return out
}

func FuzzOTLPJSON(f *testing.F) {
	for _, seed := range otlpSeedSpans(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		(OTLPJSON{}).Sniff(data)
		decodeBytes(t, OTLPJSON{}, data)
		fuzzLimited(t, OTLPJSON{}, data)
	})
}

func FuzzOTLPProto(f *testing.F) {
	for _, seed := range otlpSeedSpans(f) {
		msg := toProto(f, seed)[0]
		f.Add(msg)
		f.Add(framed(msg, msg))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		(OTLPProto{}).Sniff(data)
		decodeBytes(t, OTLPProto{}, data)
		fuzzLimited(t, OTLPProto{}, data)
	})
}
