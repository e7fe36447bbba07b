package guardproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/guard"
	"github.com/faultline/faultline/internal/store/sqlite"
	"github.com/faultline/faultline/trace"
)

func TestGuardAnnotateHeader(t *testing.T) {
	up := newUpstream(t, answers("on it"))
	rule := &guard.Rule{Name: "ambiguous", Mode: "FM-2.2", Signals: []*regexp.Regexp{regexp.MustCompile(`either`)}, Action: guard.Annotate}
	_, srv := startProxy(t, up.URL, Config{Policy: policy(rule)})
	resp, body := post(t, srv.URL, request(false, "system", "you fix things", "user", "fix either a or b"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if got, want := resp.Header.Get(GuardHeader), "rule=ambiguous mode=FM-2.2 action=annotate"; got != want {
		t.Errorf("%s = %q, want %q", GuardHeader, got, want)
	}
	if body != completionBody("on it") {
		t.Errorf("body %s, want the upstream's", body)
	}
}

// The messages the client resends after the model called the tool loop.
var loopHistory = []string{
	`{"role": "system", "content": "you fix things"}`,
	`{"role": "user", "content": "go"}`,
	`{"role": "assistant", "content": null, "tool_calls": [{"id": "c-loop", "type": "function", "function": {"name": "loop", "arguments": "{\"x\": 1}"}}]}`,
	`{"role": "tool", "tool_call_id": "c-loop", "content": "same as before"}`,
}

func TestGuardInjectInNextRequest(t *testing.T) {
	up := newUpstream(t, answers("call:loop", "fine"))
	rule := &guard.Rule{Name: "loop", Mode: "FM-1.3", Detectors: []*detect.Detector{toolDetector("loop", false)}, Action: guard.Inject, Message: "stop looping"}
	_, srv := startProxy(t, up.URL, Config{Policy: policy(rule)})
	resp, body := post(t, srv.URL, withMessages(loopHistory[:2]...), SessionHeader, "s1")
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get(GuardHeader), "action=inject") {
		t.Fatalf("first answer: status %d, %s %q: %s", resp.StatusCode, GuardHeader, resp.Header.Get(GuardHeader), body)
	}
	if strings.Contains(up.body(0), injectPrefix) {
		t.Errorf("the first request was sent with an injection: %s", up.body(0))
	}
	if resp, body = post(t, srv.URL, withMessages(loopHistory...), SessionHeader, "s1"); resp.StatusCode != http.StatusOK {
		t.Fatalf("second answer: status %d: %s", resp.StatusCode, body)
	}
	var sent struct {
		Messages []struct{ Role, Content string }
	}
	if err := json.Unmarshal([]byte(up.body(1)), &sent); err != nil {
		t.Fatal(err)
	}
	last := sent.Messages[len(sent.Messages)-1]
	if len(sent.Messages) != len(loopHistory)+1 || last.Role != "system" || last.Content != injectPrefix+"stop looping" {
		t.Errorf("second request forwarded with messages %+v, want the history and the injection", sent.Messages)
	}
}

// An injection whose request the model never answered (the upstream
// failed) goes with the session's next request.
func TestGuardInjectionKeptWhenUpstreamFails(t *testing.T) {
	ok := answers("call:loop", "fine")
	up := newUpstream(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		ok(min(n, 1), w, r)
	})
	rule := &guard.Rule{Name: "loop", Mode: "FM-1.3", Detectors: []*detect.Detector{toolDetector("loop", false)}, Action: guard.Inject, Message: "stop looping"}
	_, srv := startProxy(t, up.URL, Config{Policy: policy(rule)})
	post(t, srv.URL, withMessages(loopHistory[:2]...), SessionHeader, "s1")
	if resp, body := post(t, srv.URL, withMessages(loopHistory...), SessionHeader, "s1"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("second answer: status %d: %s", resp.StatusCode, body)
	}
	if !strings.Contains(up.body(1), injectPrefix+"stop looping") {
		t.Fatalf("the failed request did not carry the injection: %s", up.body(1))
	}
	// The client retries the same request.
	if resp, body := post(t, srv.URL, withMessages(loopHistory...), SessionHeader, "s1"); resp.StatusCode != http.StatusOK {
		t.Fatalf("retry: status %d: %s", resp.StatusCode, body)
	}
	if got := strings.Count(up.body(2), injectPrefix); got != 1 {
		t.Errorf("the retried request carries the injection %d times, want once: %s", got, up.body(2))
	}
}

func TestGuardFinishGateAsksAgain(t *testing.T) {
	tests := []struct {
		name     string
		maxFires int
		calls    int
	}{
		{"once", 1, 2},
		{"unbounded rule, bounded per request", 0, 1 + maxGateAsks},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, answers("done", "checked and done"))
			rule := &guard.Rule{Name: "verify", Mode: "FM-3.2", Detectors: []*detect.Detector{finishDetector()}, AtFinish: true, Action: guard.Inject, Message: "check it", MaxFires: tt.maxFires}
			_, srv := startProxy(t, up.URL, Config{Policy: policy(rule)})
			resp, body := post(t, srv.URL, request(false, "user", "fix it"))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if up.calls() != tt.calls {
				t.Errorf("upstream called %d times, want %d", up.calls(), tt.calls)
			}
			if !strings.Contains(body, "checked and done") {
				t.Errorf("the client got %s, want the answer asked again", body)
			}
			if again := up.body(1); !strings.Contains(again, `"done"`) || !strings.Contains(again, injectPrefix+"check it") {
				t.Errorf("asked again with %s, want the first answer and the corrective message", again)
			}
		})
	}
}

func TestGuardBlockEndsSession(t *testing.T) {
	up := newUpstream(t, answers("call:x"))
	rule := &guard.Rule{Name: "budget", Mode: "FM-1.5", Budget: &guard.Budget{Steps: 3, WarnAt: 1}, Action: guard.Block, Message: "over budget"}
	_, srv := startProxy(t, up.URL, Config{Policy: policy(rule)})
	for i := range 2 {
		resp, body := post(t, srv.URL, request(false, "system", "s", "user", "go"), SessionHeader, "b")
		var e apiError
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			t.Fatalf("request %d: %v: %s", i, err, body)
		}
		if resp.StatusCode != http.StatusForbidden || e.Error.Type != "faultline_guard" || e.Error.Message != "over budget" {
			t.Errorf("request %d: status %d, error %+v; want 403 faultline_guard over budget", i, resp.StatusCode, e.Error)
		}
	}
	if up.calls() != 1 {
		t.Errorf("upstream called %d times, want once: the ended session's request is refused", up.calls())
	}
}

// sse writes a stream's events, flushing each.
func sse(w http.ResponseWriter, events ...string) {
	for _, e := range events {
		fmt.Fprintf(w, "data: %s\n\n", e)
	}
	w.(http.Flusher).Flush()
}

func streamedCall(release <-chan struct{}) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, `{"choices": [{"index": 0, "delta": {"role": "assistant", "content": "looking"}}]}`)
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		sse(w,
			`{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "lo", "arguments": ""}}]}}]}`,
			`{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"name": "op", "arguments": "{\"x\""}}]}}]}`,
			`{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}}]}`,
			`{"choices": [], "usage": {"total_tokens": 42}}`,
			`[DONE]`)
	}
}

// readStream posts a streamed request, closes release once the first event
// arrived, and returns the lines of the stream.
func readStream(t *testing.T, url string, release chan struct{}) (*http.Response, []string) {
	t.Helper()
	return readEvents(t, url+ChatPath, request(true, "system", "s", "user", "go"), release, "looking")
}

// readEvents posts a streamed request of session "st", closes release once
// the first event, which says first, arrived, and returns the lines of the
// stream.
func readEvents(t *testing.T, url, body string, release chan struct{}, first string) (*http.Response, []string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set(SessionHeader, "st")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var lines []string
	released := false
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if !released && sc.Text() == "" {
			if event := strings.Join(lines, "\n"); !strings.Contains(event, first) {
				t.Errorf("first event %q, want it to say %q", event, first)
			}
			// The upstream holds the rest until the client has the first.
			close(release)
			released = true
		}
	}
	return resp, lines
}

func TestGuardStreamPassesChunksAndObserves(t *testing.T) {
	release := make(chan struct{})
	up := newUpstream(t, streamedCall(release))
	rule := &guard.Rule{Name: "loop", Mode: "FM-1.3", Detectors: []*detect.Detector{toolDetector("loop", false)}, Action: guard.Annotate}
	p, srv := startProxy(t, up.URL, Config{Policy: policy(rule)})
	_, lines := readStream(t, srv.URL, release)
	comment := slicesIndex(lines, ": faultline-guard rule=loop mode=FM-1.3 action=annotate")
	done := slicesIndex(lines, "data: [DONE]")
	if comment < 0 || done < comment {
		t.Errorf("stream %q: want the annotation before [DONE]", lines)
	}
	e := p.sessions.all()[0]
	steps := e.s.Steps()
	last := steps[len(steps)-1]
	if last.Kind != trace.KindToolCall || last.Tool != "loop" || last.Args != `{"x": 1}` || last.CallID != "c1" {
		t.Errorf("last step %+v, want the call rebuilt from its deltas", last)
	}
}

func slicesIndex(lines []string, s string) int {
	for i, l := range lines {
		if l == s {
			return i
		}
	}
	return -1
}

func TestGuardStreamBlock(t *testing.T) {
	release := make(chan struct{})
	up := newUpstream(t, streamedCall(release))
	rule := &guard.Rule{Name: "budget", Mode: "FM-1.5", Budget: &guard.Budget{Steps: 3, WarnAt: 1}, Action: guard.Block, Message: "over budget"}
	_, srv := startProxy(t, up.URL, Config{Policy: policy(rule)})
	_, lines := readStream(t, srv.URL, release)
	errAt := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "data: {\"error\"") && strings.Contains(l, "faultline_guard") && strings.Contains(l, "over budget") {
			errAt = i
		}
	}
	if done := slicesIndex(lines, "data: [DONE]"); errAt < 0 || done < errAt {
		t.Errorf("stream %q: want an error event before [DONE]", lines)
	}
	resp, _ := post(t, srv.URL, request(true, "system", "s", "user", "go"), SessionHeader, "st")
	if resp.StatusCode != http.StatusForbidden || up.calls() != 1 {
		t.Errorf("after the block: status %d, upstream called %d times; want 403 and once", resp.StatusCode, up.calls())
	}
}

func TestGuardSessionKeys(t *testing.T) {
	steps := func(system, user string) []trace.Step {
		return []trace.Step{{Kind: trace.KindSystem, Text: system}, {Kind: trace.KindMessage, Role: trace.RoleUser, Text: user}, {Kind: trace.KindMessage, Role: trace.RoleAssistant, Text: "later"}}
	}
	hashed := sessionKey(http.Header{}, steps("s", "u"))
	tests := []struct {
		name   string
		header map[string]string
		steps  []trace.Step
		want   string
	}{
		{"header", map[string]string{SessionHeader: "agent-7", "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, steps("s", "u"), "agent-7"},
		{"traceparent", map[string]string{"traceparent": "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"}, steps("s", "u"), "trace-4bf92f3577b34da6a3ce929d0e0e4736"},
		{"invalid traceparent", map[string]string{"traceparent": "00-0000-00f067aa0ba902b7-01"}, steps("s", "u"), hashed},
		{"hash of the opening, whatever follows", nil, steps("s", "u")[:2], hashed},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.header {
			h.Set(k, v)
		}
		if got := sessionKey(h, tt.steps); got != tt.want {
			t.Errorf("%s: key %q, want %q", tt.name, got, tt.want)
		}
	}
	if other := sessionKey(http.Header{}, steps("s", "another task")); other == hashed || !strings.HasPrefix(hashed, "chat-") {
		t.Errorf("keys %q and %q: want distinct hashes of the openings", hashed, other)
	}
}

func TestGuardSessionsByOpening(t *testing.T) {
	up := newUpstream(t, answers("call:ls", "done"))
	p, srv := startProxy(t, up.URL, Config{Policy: policy()})
	post(t, srv.URL, withMessages(loopHistory[:2]...))
	history := append(loopHistory[:2:2], `{"role": "assistant", "content": null, "tool_calls": [{"id": "c-ls", "type": "function", "function": {"name": "ls", "arguments": "{\"x\": 1}"}}]}`,
		`{"role": "tool", "tool_call_id": "c-ls", "content": "a b"}`)
	post(t, srv.URL, withMessages(history...))
	s := p.Stats()
	if s.OpenSessions != 1 || s.Requests != 2 {
		t.Fatalf("stats %+v, want one session of two requests", s)
	}
	e := p.sessions.all()[0]
	if e.gen != 1 || len(e.s.Steps()) != 5 {
		t.Errorf("session of run %d with %d steps, want run 1 of 5 steps (each observed once)", e.gen, len(e.s.Steps()))
	}
	// A history that no longer extends the session's starts it over.
	post(t, srv.URL, withMessages(loopHistory[0], loopHistory[1], `{"role": "assistant", "content": "rewritten"}`, `{"role": "user", "content": "again"}`))
	if e.gen != 2 || e.s.ID != "guard:"+e.key+"#2" || p.Stats().StartedOver != 1 {
		t.Errorf("run %d %s, %d started over, want run 2", e.gen, e.s.ID, p.Stats().StartedOver)
	}
}

func TestGuardUpstreamFailures(t *testing.T) {
	gone := newUpstream(t, answers("x"))
	gone.Close()
	tests := []struct {
		name   string
		url    string
		answer func(int, http.ResponseWriter, *http.Request)
		status int
		says   string
	}{
		{"down", gone.URL, nil, http.StatusBadGateway, gone.URL},
		{"slow", "", func(_ int, w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, http.StatusGatewayTimeout, "did not answer within"},
		{"garbage", "", func(_ int, w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hello") }, http.StatusBadGateway, "not a chat completion"},
		{"refusal passed on", "", func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error": {"message": "slow down"}}`)
		}, http.StatusTooManyRequests, "slow down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := tt.url
			if url == "" {
				url = newUpstream(t, tt.answer).URL
			}
			_, srv := startProxy(t, url, Config{Policy: policy(), Timeout: 100 * time.Millisecond})
			for _, stream := range []bool{false, true} {
				resp, body := post(t, srv.URL, request(stream, "user", "go"))
				if resp.StatusCode != tt.status || !strings.Contains(body, tt.says) {
					t.Errorf("stream %v: status %d %s, want %d saying %q", stream, resp.StatusCode, body, tt.status, tt.says)
				}
				if tt.status == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "7" {
					t.Errorf("stream %v: the upstream's headers were not passed on: %v", stream, resp.Header)
				}
			}
		})
	}
}

func TestGuardEvictsLeastRecentlyUsed(t *testing.T) {
	up := newUpstream(t, answers("ok"))
	pol := policy()
	pol.MaxSessions = 2
	p, srv := startProxy(t, up.URL, Config{Policy: pol})
	for _, id := range []string{"a", "b", "a", "c"} {
		post(t, srv.URL, request(false, "user", "go"), SessionHeader, id)
	}
	resp, err := http.Get(srv.URL + StatsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s Stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || s.OpenSessions != 2 || s.Evicted != 1 || s.Requests != 4 {
		t.Errorf("%s: %+v (%v), want 4 requests, 2 open and 1 evicted", StatsPath, s, err)
	}
	var keys []string
	for _, e := range p.sessions.all() {
		keys = append(keys, e.key)
	}
	if strings.Join(keys, ",") != "c,a" {
		t.Errorf("sessions %v, want c,a (b least recently used)", keys)
	}
	p.sessions.sweep(time.Now().Add(2 * pol.SessionIdle))
	if s := p.Stats(); s.OpenSessions != 0 || s.Evicted != 3 {
		t.Errorf("after the idle time: stats %+v, want none open and 3 evicted", s)
	}
}

func TestGuardFailures(t *testing.T) {
	panics := &detect.Detector{Name: "panics", Mode: "FM-1.3", Run: func(*detect.Pass) { panic("detector bug") }}
	tests := []struct {
		name     string
		body     string
		rule     *guard.Rule
		failOpen bool
		status   int
	}{
		{"not JSON, open", "not json", nil, true, http.StatusOK},
		{"not JSON, closed", "not json", nil, false, http.StatusInternalServerError},
		{"detector panic, open", request(false, "user", "go"), &guard.Rule{Name: "p", Mode: "FM-1.3", Detectors: []*detect.Detector{panics}, Action: guard.Block}, true, http.StatusOK},
		{"detector panic, closed", request(false, "user", "go"), &guard.Rule{Name: "p", Mode: "FM-1.3", Detectors: []*detect.Detector{panics}, Action: guard.Block}, false, http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t, answers("ok"))
			pol := policy()
			if tt.rule != nil {
				pol = policy(tt.rule)
			}
			pol.FailOpen = tt.failOpen
			p, srv := startProxy(t, up.URL, Config{Policy: pol})
			resp, body := post(t, srv.URL, tt.body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d %s, want %d", resp.StatusCode, body, tt.status)
			}
			s := p.Stats()
			if tt.failOpen {
				if up.calls() != 1 || up.body(0) != tt.body || s.FailOpen != 1 {
					t.Errorf("upstream sent %d requests (%q), fail-open count %d; want the body untouched, counted", up.calls(), up.body(0), s.FailOpen)
				}
			} else if up.calls() != 0 || s.FailClosed != 1 || !strings.Contains(body, "faultline guard failed") {
				t.Errorf("upstream called %d times, fail-closed count %d, body %s; want refused, counted", up.calls(), s.FailClosed, body)
			}
		})
	}
}

func TestGuardOtherPathsForwarded(t *testing.T) {
	up := newUpstream(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s auth=%s", r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"))
	})
	_, srv := startProxy(t, up.URL+"/base", Config{Policy: policy()})
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/models?x=1", nil)
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	if got := buf.String(); got != "GET /base/v1/models?x=1 auth=Bearer k" {
		t.Errorf("upstream saw %q", got)
	}
}

func TestGuardStoresRuns(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	up := newUpstream(t, answers("call:loop", "done"))
	rule := &guard.Rule{Name: "loop", Mode: "FM-1.3", Detectors: []*detect.Detector{toolDetector("loop", false)}, Action: guard.Annotate}
	var decisions bytes.Buffer
	p, srv := startProxy(t, up.URL, Config{Policy: policy(rule), Store: st, SaveEvery: 1, Decisions: &decisions})
	post(t, srv.URL, withMessages(loopHistory[:2]...), SessionHeader, "run")
	post(t, srv.URL, withMessages(loopHistory...), SessionHeader, "run")
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// Stored at the decision (3 steps), then at Close (5): the longer run
	// replaces the shorter.
	got, err := st.Load(ctx, "guard:run")
	if err != nil {
		t.Fatal(err)
	}
	findings, err := st.Findings(ctx, "guard:run")
	if err != nil {
		t.Fatal(err)
	}
	if got.Format != "guard" || len(got.Steps) != 5 || len(findings) != 1 {
		t.Fatalf("stored %s run of %d steps with findings %+v; want a guard run of 5 steps, 1 finding", got.Format, len(got.Steps), findings)
	}
	f := findings[0]
	if f.Source != Source || f.Mode != "FM-1.3" || len(f.Steps) != 1 || f.Steps[0] != 2 || !strings.Contains(f.Explanation, "loop (annotate)") {
		t.Errorf("finding %+v, want the decision at step 2 naming its action", f)
	}
	lines := strings.Split(strings.TrimSpace(decisions.String()), "\n")
	var d guard.Decision
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &d) != nil || d.Rule != "loop" || d.Session != "guard:run" {
		t.Errorf("decision log %q, want one line of rule loop", decisions.String())
	}
}

func TestGuardStreamTimeoutMidway(t *testing.T) {
	up := newUpstream(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, `{"choices": [{"index": 0, "delta": {"content": "looking"}}]}`)
		<-r.Context().Done()
	})
	_, srv := startProxy(t, up.URL, Config{Policy: policy(), Timeout: 100 * time.Millisecond})
	resp, body := post(t, srv.URL, request(true, "user", "go"))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "looking") || !strings.Contains(body, `"type":"upstream_timeout"`) {
		t.Errorf("status %d, stream %q: want the first chunk, then a timeout error event", resp.StatusCode, body)
	}
}
