package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// receivedSteps is how many steps the receiver makes of a posted agent run;
// lateSpanSteps, how many a late span adds.
const (
	receivedSteps = 3
	lateSpanSteps = 1
)

// Every tenth acknowledged trace gets a late span, this long after.
const (
	lateEvery = 10
	lateAfter = 1500 * time.Millisecond
)

var client = &http.Client{Timeout: 30 * time.Second}

func httpGet(ctx context.Context, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	return client.Do(req)
}

// post sends one OTLP request until the receiver acknowledges it (true) or
// the load ends (false). Refusals (429, 503) wait their Retry-After, at
// most a second; a receiver down (killed, restarting) is tried again soon.
// A request under way when the load ends is answered, so that whether it
// was acknowledged is known; one that got no answer (the receiver killed
// while reading it) may still have been stored.
func (s *soaker) post(ctx context.Context, body []byte) bool {
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, s.receiverURL, bytes.NewReader(body))
		if err != nil {
			panic(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			s.fig.Unreachable.Add(1)
			sleep(ctx, 50*time.Millisecond)
			continue
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			// A partial success is a refusal of the spans it counts.
			var answer struct {
				PartialSuccess struct {
					RejectedSpans string `json:"rejectedSpans"`
					ErrorMessage  string `json:"errorMessage"`
				} `json:"partialSuccess"`
			}
			if err := json.Unmarshal(msg, &answer); err != nil {
				s.postError("answered 200 with %q: %v", msg, err)
				return false
			}
			if p := answer.PartialSuccess; p.RejectedSpans != "" && p.RejectedSpans != "0" {
				s.postError("%s spans rejected: %s", p.RejectedSpans, p.ErrorMessage)
				return false
			}
			return true
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			s.fig.Throttled.Add(1)
			wait := time.Second
			if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs < 1 {
				wait = time.Duration(secs) * time.Second
			}
			sleep(ctx, wait)
		default:
			s.postError("answered %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
			return false
		}
	}
	return false
}

// postError notes a refusal by the receiver; the first twenty are kept.
func (s *soaker) postError(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fig.Refused++
	if len(s.fig.PostErrors) < 20 {
		s.fig.PostErrors = append(s.fig.PostErrors, fmt.Sprintf(format, args...))
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// sendTraces posts agent runs, one per request, until the load ends or
// MaxTraces were posted.
func (s *soaker) sendTraces(ctx context.Context, late *lateSpans) {
	for ctx.Err() == nil {
		s.mu.Lock()
		if s.fig.Posted >= s.cfg.MaxTraces {
			s.mu.Unlock()
			return
		}
		s.fig.Posted++
		n := s.fig.Posted
		s.mu.Unlock()
		id := traceID(s.cfg.Seed, n)
		if !s.post(ctx, agentRun(id)) {
			continue
		}
		s.mu.Lock()
		s.acked[id.String()] += 0
		s.mu.Unlock()
		if n%lateEvery == 0 {
			late.add(id, time.Now().Add(lateAfter))
		}
	}
}

// sendLateSpans posts each late span once it is due.
func (s *soaker) sendLateSpans(ctx context.Context, late *lateSpans) {
	for ctx.Err() == nil {
		id, ok := late.due()
		if !ok {
			sleep(ctx, 50*time.Millisecond)
			continue
		}
		s.mu.Lock()
		s.lateTried[id.String()]++
		s.mu.Unlock()
		if s.post(ctx, lateSpan(id)) {
			s.fig.LateAcked.Add(1)
			s.mu.Lock()
			s.acked[id.String()]++
			s.mu.Unlock()
		}
	}
}

// lateSpans are the late spans to send, by when.
type lateSpans struct {
	mu      sync.Mutex
	pending []lateSpanDue
}

type lateSpanDue struct {
	trace pcommon.TraceID
	at    time.Time
}

func newLateSpans() *lateSpans { return &lateSpans{} }

func (l *lateSpans) add(id pcommon.TraceID, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending = append(l.pending, lateSpanDue{id, at})
}

// due takes the first late span whose time has come.
func (l *lateSpans) due() (pcommon.TraceID, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) == 0 || time.Now().Before(l.pending[0].at) {
		return pcommon.TraceID{}, false
	}
	id := l.pending[0].trace
	l.pending = l.pending[1:]
	return id, true
}

// traceID is the id of the soak's nth trace: its seed, then n.
func traceID(seed uint64, n int) pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[:8], seed|1) // never all zero
	binary.BigEndian.PutUint64(id[8:], uint64(n))
	return id
}

var rootSpan = pcommon.SpanID{0x50, 0xa4, 0, 0, 0, 0, 0, 1}

// agentRun is one small agent run as an instrumented agent exports it: an
// invoke_agent root, a chat turn calling a tool, the tool's span and a
// final chat turn.
func agentRun(id pcommon.TraceID) []byte {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	t0 := time.Unix(1767225600, 0)
	root := spans.AppendEmpty()
	root.SetTraceID(id)
	root.SetSpanID(rootSpan)
	root.SetName("invoke_agent soak")
	root.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
	root.SetStartTimestamp(pcommon.NewTimestampFromTime(t0))
	root.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(10 * time.Second)))
	child := func(n byte, name, operation string) pcommon.Map {
		sp := spans.AppendEmpty()
		sp.SetTraceID(id)
		sp.SetSpanID(pcommon.SpanID{0x50, 0xa4, 0, 0, 0, 0, 1, n})
		sp.SetParentSpanID(rootSpan)
		sp.SetName(name)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Duration(n) * time.Second)))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Duration(n)*time.Second + 500*time.Millisecond)))
		a := sp.Attributes()
		a.PutStr("gen_ai.operation.name", operation)
		return a
	}
	a := child(1, "chat soak-model", "chat")
	a.PutStr("gen_ai.request.model", "soak-model")
	a.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"get_metrics","arguments":{"service":"checkout"}}]}]`)
	a = child(2, "execute_tool get_metrics", "execute_tool")
	a.PutStr("gen_ai.tool.name", "get_metrics")
	a.PutStr("gen_ai.tool.call.id", "call_1")
	a.PutStr("gen_ai.tool.call.result", `{"p99_ms": 4200}`)
	a = child(3, "chat soak-model", "chat")
	a.PutStr("gen_ai.request.model", "soak-model")
	a.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"checkout is slow: p99 4.2 s"}]}]`)
	return marshal(td)
}

// lateSpan is one more chat turn of a run already sent.
func lateSpan(id pcommon.TraceID) []byte {
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(id)
	sp.SetSpanID(pcommon.SpanID{0x50, 0xa4, 0, 0, 0, 0, 2, 1})
	sp.SetParentSpanID(rootSpan)
	sp.SetName("chat soak-model")
	t := time.Unix(1767225600, 0).Add(8 * time.Second)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(t))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(t.Add(time.Second)))
	a := sp.Attributes()
	a.PutStr("gen_ai.operation.name", "chat")
	a.PutStr("gen_ai.request.model", "soak-model")
	a.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"and the cache hit rate fell"}]}]`)
	return marshal(td)
}

func marshal(td ptrace.Traces) []byte {
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		panic(err) // the soak built it: a bug here, not bad input
	}
	return b
}

// csrfField finds a form's CSRF token in a page.
var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// saveLabels saves labels through the web UI as a labeller would, one
// trace after another (picked at random among those stored), each with a
// note of its own, and notes the last one saved on each trace.
func (s *soaker) saveLabels(ctx context.Context) {
	jar, _ := cookiejar.New(nil)
	web := &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	page, err := s.webPage(ctx, web, "/labels")
	if err != nil {
		s.webError("opening the label page: %v", err)
		return
	}
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		s.webError("no CSRF token on the label page")
		return
	}
	csrf := m[1]
	if code, err := s.webPost(ctx, web, "/labeller", url.Values{"csrf": {csrf}, "name": {"soak"}, "back": {"/labels"}}); err != nil || code != http.StatusSeeOther {
		s.webError("naming the labeller: %d %v", code, err)
		return
	}
	db, err := sql.Open("sqlite", "file:"+s.db+"?mode=ro")
	if err != nil {
		s.webError("%v", err)
		return
	}
	defer db.Close()
	for n := 1; ctx.Err() == nil; n++ {
		var id string
		if err := db.QueryRowContext(ctx, `SELECT id FROM traces ORDER BY random() LIMIT 1`).Scan(&id); err != nil {
			if ctx.Err() == nil {
				s.webError("picking a trace: %v", err)
			}
			return
		}
		note := fmt.Sprintf("soak label %d", n)
		code, err := s.webPost(ctx, web, "/traces/"+url.PathEscape(id)+"/labels", url.Values{
			"csrf": {csrf}, "rest": {"absent"}, "v-FM-1.1": {"absent"}, "note-FM-1.1": {note}})
		switch {
		case err != nil && ctx.Err() != nil:
			// The load ended during the save: stored or not, either is right.
			s.mu.Lock()
			s.unanswered.id, s.unanswered.note = id, note
			s.mu.Unlock()
			return
		case err != nil || code != http.StatusSeeOther:
			s.webError("saving a label on %s: %d %v", id, code, err)
			sleep(ctx, 200*time.Millisecond)
			continue
		}
		s.fig.LabelsSaved.Add(1)
		s.mu.Lock()
		s.labels[id] = note
		s.mu.Unlock()
		sleep(ctx, 20*time.Millisecond)
	}
}

// readPages reads the web UI's pages while everything else writes.
func (s *soaker) readPages(ctx context.Context) {
	pages := []string{"/", "/traces", "/traces?q=checkout", "/labels", "/agreement", "/count"}
	for n := 0; ctx.Err() == nil; n++ {
		page := pages[n%len(pages)]
		resp, err := httpGet(ctx, s.webURL+page)
		if err != nil {
			if ctx.Err() == nil {
				s.webError("GET %s: %v", page, err)
			}
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			s.webError("GET %s: %d %s", page, resp.StatusCode, bytes.TrimSpace(body))
		}
		s.fig.PagesRead.Add(1)
		sleep(ctx, 50*time.Millisecond)
	}
}

func (s *soaker) webPage(ctx context.Context, web *http.Client, path string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.webURL+path, nil)
	if err != nil {
		return "", err
	}
	resp, err := web.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return string(body), err
}

func (s *soaker) webPost(ctx context.Context, web *http.Client, path string, form url.Values) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.webURL+path, bytes.NewBufferString(form.Encode()))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := web.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// webError notes a failure of the web UI; the first twenty are kept.
func (s *soaker) webError(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.fig.WebErrors) < 20 {
		s.fig.WebErrors = append(s.fig.WebErrors, fmt.Sprintf(format, args...))
	}
}
