// Package receivetest builds the OTLP requests the receiver's benchmarks
// post: the same small agent runs for the in-process benchmark and for
// bench/receivebench, which posts them to a `faultline receive` of any
// revision.
package receivetest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// RunsPerRequest and SpansPerRun are the shape of a request.
const (
	RunsPerRequest = 10
	SpansPerRun    = 10
)

// placeholder trace ids in the payload template, replaced per request.
func placeholder(i int) pcommon.TraceID {
	return pcommon.TraceID{0xfa, 0x17, 0x11, 0x4e, 0xba, 0x5e, byte(i), 0x9c, 0x3d, 0x71, 0x05, 0xe2, 0x88, 0x6b, 0x2f, 0xd4}
}

// Template is one request: 10 agent runs of 10 spans each (an
// invoke_agent root, 5 chat calls carrying their new messages, 4 tool calls),
// attributes of the size a small agent writes. The conversation grows
// across the calls, as gen_ai.input.messages does.
func Template() []byte {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "bench-agent")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	start := pcommon.NewTimestampFromTime(time.Unix(1767225600, 0))
	history := `{"role":"user","parts":[{"type":"text","content":"Checkout latency spiked at 14:02; find the root cause and name the evidence."}]}`
	for tr := range RunsPerRequest {
		id := placeholder(tr)
		root := spans.AppendEmpty()
		root.SetTraceID(id)
		root.SetSpanID(pcommon.SpanID{byte(tr), 1})
		root.SetName("invoke_agent bench")
		root.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
		root.Attributes().PutStr("gen_ai.agent.name", "bench")
		root.SetStartTimestamp(start)
		root.SetEndTimestamp(start + 10e9)
		msgs := history
		for i := range SpansPerRun - 1 {
			sp := spans.AppendEmpty()
			sp.SetTraceID(id)
			sp.SetSpanID(pcommon.SpanID{byte(tr), byte(i + 2)})
			sp.SetParentSpanID(root.SpanID())
			sp.SetStartTimestamp(start + pcommon.Timestamp(i)*1e9)
			sp.SetEndTimestamp(start + pcommon.Timestamp(i)*1e9 + 5e8)
			a := sp.Attributes()
			a.PutStr("http.url", "https://api.example.com/v1/chat/completions") // dropped on receipt
			call := fmt.Sprintf("call_%d", i)
			if i%2 == 0 {
				ChatCall(sp)
				a.PutStr("gen_ai.input.messages", "["+msgs+"]")
				out := fmt.Sprintf(`{"role":"assistant","parts":[{"type":"text","content":"Step %d: checking the next signal."},{"type":"tool_call","id":"call_%d","name":"get_metrics","arguments":{"service":"checkout","window":"15m"}}]}`, i, i+1)
				a.PutStr("gen_ai.output.messages", "["+out+"]")
				msgs += "," + out
			} else {
				sp.SetName("execute_tool get_metrics")
				a.PutStr("gen_ai.operation.name", "execute_tool")
				a.PutStr("gen_ai.tool.name", "get_metrics")
				a.PutStr("gen_ai.tool.call.id", call)
				result := `{"p99_ms":4200,"error_rate":0.031,"series":"` + strings.Repeat("1.0,", 40) + `"}`
				a.PutStr("gen_ai.tool.call.result", result)
				msgs += `,{"role":"tool","parts":[{"type":"tool_call_response","id":"` + call + `","response":` + result + `}]}`
			}
		}
	}
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		panic(err)
	}
	return b
}

// Request gives the template fresh trace ids: n numbers the request.
func Request(template []byte, n int) []byte {
	out := template
	for i := range RunsPerRequest {
		ph := placeholder(i)
		var id [16]byte
		binary.BigEndian.PutUint64(id[:8], uint64(n)+1)
		binary.BigEndian.PutUint64(id[8:], uint64(i)+1)
		out = bytes.ReplaceAll(out, ph[:], id[:])
	}
	return out
}

// ChatCall names sp a chat call and puts what every chat span of the
// benchmarks carries: the operation, the model and the token counts.
func ChatCall(sp ptrace.Span) {
	sp.SetName("chat gpt-4.1")
	a := sp.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.request.model", "gpt-4.1")
	a.PutInt("gen_ai.usage.input_tokens", 900)
	a.PutInt("gen_ai.usage.output_tokens", 60)
}
