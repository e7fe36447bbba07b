// Command receivebench posts OTLP/HTTP requests to a running `faultline
// receive`, for bench/receive.sh.
//
// By default it posts large requests all at once, for the script to read
// the receiver's peak resident memory: CLIENTS requests of about SIZE_MB
// each (protobuf, one agent run per request), each retried on 429 or 503
// after its Retry-After until it is answered 200 or the deadline passes. It
// prints how the requests were answered.
//
// With -requests N, it posts N requests of 10 small agent runs of 10 spans
// (the in-process benchmark's, built before the first is sent), CLIENTS at
// a time, each retried 5 ms after a refusal, for the script to time the
// receiver of any revision with one client: the receiver's rate is then
// measured apart from the client's work.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/faultline/faultline/internal/receive/receivetest"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:4318/v1/traces", "the receiver's OTLP/HTTP traces endpoint")
	clients := flag.Int("clients", 16, "requests sent at once")
	sizeMB := flag.Float64("size-mb", 23, "size of each request body, in MiB")
	retry := flag.Bool("retry", false, "retry refused requests (429, 503) after their Retry-After")
	deadline := flag.Duration("deadline", 2*time.Minute, "stop retrying after this long")
	small := flag.Int("requests", 0, "post this many requests of 10 runs of 10 spans, CLIENTS at a time, rather than CLIENTS large ones")
	flag.Parse()
	if *small > 0 {
		postSmall(*url, *small, *clients, *deadline)
		return
	}

	bodies := make([][]byte, *clients)
	for i := range bodies {
		bodies[i] = request(i, int(*sizeMB*(1<<20)))
	}
	fmt.Printf("%d requests of %.1f MiB (protobuf, %d spans each)\n", *clients, float64(len(bodies[0]))/(1<<20), spans(bodies[0]))
	var mu sync.Mutex
	codes := map[string]int{}
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(*deadline)
	for _, body := range bodies {
		wg.Go(func() {
			for {
				resp, err := http.Post(*url, "application/x-protobuf", bytes.NewReader(body))
				code := "error"
				wait := time.Second
				if err == nil {
					resp.Body.Close()
					code = strconv.Itoa(resp.StatusCode)
					if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
						wait = time.Duration(s) * time.Second
					}
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
				if !*retry || code == "200" || code == "413" || time.Now().Add(wait).After(stop) {
					return
				}
				time.Sleep(wait)
			}
		})
	}
	wg.Wait()
	var parts []string
	for code, n := range codes {
		parts = append(parts, fmt.Sprintf("%s×%d", code, n))
	}
	fmt.Printf("answers: %s in %.1fs\n", strings.Join(parts, " "), time.Since(start).Seconds())
}

// postSmall posts n requests of small runs, clients at a time, each until
// it is answered 200 (a refused one again after 5 ms) or the deadline.
func postSmall(url string, n, clients int, deadline time.Duration) {
	template := receivetest.Template()
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = receivetest.Request(template, i)
	}
	next := make(chan []byte)
	var refused, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	stop := start.Add(deadline)
	for range clients {
		wg.Go(func() {
			for body := range next {
				for time.Now().Before(stop) {
					resp, err := http.Post(url, "application/x-protobuf", bytes.NewReader(body))
					if err == nil {
						resp.Body.Close()
						if resp.StatusCode == http.StatusOK {
							break
						}
						refused.Add(1)
					} else if failed.Add(1) == 1 {
						log.Print(err)
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
		})
	}
	for _, body := range bodies {
		next <- body
	}
	close(next)
	wg.Wait()
	fmt.Printf("posted %d requests (%d spans) in %.2fs, %d refused and sent again, %d failed\n",
		n, n*receivetest.RunsPerRequest*receivetest.SpansPerRun, time.Since(start).Seconds(), refused.Load(), failed.Load())
}

// request is one agent run of about size bytes: an invoke_agent root and
// chat and tool spans of about 2 KiB each, a dozen attributes apiece (HTTP
// ones the receiver drops, GenAI ones it keeps), as an instrumented agent
// sends them.
func request(n, size int) []byte {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	id := pcommon.TraceID{0xbe, 0x4c, byte(n >> 8), byte(n), 1}
	t0 := pcommon.NewTimestampFromTime(time.Unix(1767225600, 0))
	root := spans.AppendEmpty()
	root.SetTraceID(id)
	root.SetSpanID(pcommon.SpanID{1})
	root.SetName("invoke_agent bench")
	root.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
	root.SetStartTimestamp(t0)
	root.SetEndTimestamp(t0 + 1e12)
	text := strings.Repeat("p99 latency rose at 14:02; ", 40)
	const perSpan = 1670
	for i := 0; i < size/perSpan; i++ {
		sp := spans.AppendEmpty()
		sp.SetTraceID(id)
		sp.SetSpanID(pcommon.SpanID{byte(i >> 16), byte(i >> 8), byte(i), 2})
		sp.SetParentSpanID(root.SpanID())
		sp.SetStartTimestamp(t0 + pcommon.Timestamp(i)*1e6)
		sp.SetEndTimestamp(t0 + pcommon.Timestamp(i)*1e6 + 5e5)
		a := sp.Attributes()
		a.PutStr("http.request.method", "POST")
		a.PutStr("url.full", "https://api.example.com/v1/chat/completions")
		a.PutInt("http.response.status_code", 200)
		a.PutStr("server.address", "api.example.com")
		a.PutInt("server.port", 443)
		if i%2 == 0 {
			receivetest.ChatCall(sp)
			a.PutStr("gen_ai.response.id", "chatcmpl-"+strconv.Itoa(i))
			a.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"`+strconv.Itoa(i)+" "+text+`"},{"type":"tool_call","id":"call_`+strconv.Itoa(i)+`","name":"get_metrics","arguments":{"service":"checkout"}}]}]`)
		} else {
			sp.SetName("execute_tool get_metrics")
			a.PutStr("gen_ai.operation.name", "execute_tool")
			a.PutStr("gen_ai.tool.name", "get_metrics")
			a.PutStr("gen_ai.tool.call.id", "call_"+strconv.Itoa(i-1))
			a.PutStr("gen_ai.tool.call.result", `{"p99_ms":4200,"series":"`+strings.Repeat("1.0,", 300)+`"}`)
		}
	}
	b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		log.Fatal(err)
	}
	return b
}

func spans(body []byte) int {
	td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(body)
	if err != nil {
		log.Fatal(err)
	}
	return td.SpanCount()
}
