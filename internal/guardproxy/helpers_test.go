package guardproxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/guard"
	"github.com/faultline/faultline/trace"
)

// fakeUpstream is a chat completions API whose answers a test scripts; it
// keeps what it was sent.
type fakeUpstream struct {
	*httptest.Server
	mu      sync.Mutex
	bodies  []string
	headers []http.Header
	// answer answers the n-th call (from 0).
	answer func(n int, w http.ResponseWriter, r *http.Request)
}

func newUpstream(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *fakeUpstream {
	u := &fakeUpstream{answer: answer}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		n := len(u.bodies)
		u.bodies = append(u.bodies, string(body))
		u.headers = append(u.headers, r.Header.Clone())
		u.mu.Unlock()
		u.answer(n, w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *fakeUpstream) calls() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.bodies)
}

func (u *fakeUpstream) body(n int) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.bodies[n]
}

// answers answers each call with the next of contents: a message's text,
// or "call:NAME" for a tool call.
func answers(contents ...string) func(n int, w http.ResponseWriter, r *http.Request) {
	return func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, completionBody(contents[min(n, len(contents)-1)]))
	}
}

func completionBody(content string) string {
	msg := map[string]any{"role": "assistant", "content": content}
	if name, ok := strings.CutPrefix(content, "call:"); ok {
		msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
			map[string]any{"id": "c-" + name, "type": "function", "function": map[string]any{"name": name, "arguments": `{"x": 1}`}},
		}}
	}
	raw, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
	return string(raw)
}

// request is a chat request's body of the messages given as role, content
// pairs.
func request(stream bool, pairs ...string) string {
	var msgs []map[string]any
	for i := 0; i+1 < len(pairs); i += 2 {
		msgs = append(msgs, map[string]any{"role": pairs[i], "content": pairs[i+1]})
	}
	raw, _ := json.Marshal(map[string]any{"model": "test-model", "stream": stream, "messages": msgs})
	return string(raw)
}

// withMessages is a request body of raw messages.
func withMessages(msgs ...string) string {
	return `{"model": "test-model", "messages": [` + strings.Join(msgs, ",") + `]}`
}

func policy(rules ...*guard.Rule) *guard.Policy {
	return &guard.Policy{Name: "test", FailOpen: true, MaxSessions: 100, SessionIdle: time.Hour, Rules: rules}
}

// toolDetector reports each call of a tool.
func toolDetector(tool string, finished bool) *detect.Detector {
	return &detect.Detector{Name: "calls-" + tool, Mode: "FM-1.3", Finished: finished, Run: func(p *detect.Pass) {
		for i, s := range p.Trace.Steps {
			if s.Kind == trace.KindToolCall && s.Tool == tool {
				p.Report(trace.Finding{Steps: []int{i}, Quote: tool, Confidence: 1, Explanation: "called " + tool})
			}
		}
	}}
}

// finishDetector reports every message of the agent's, at a finish gate.
func finishDetector() *detect.Detector {
	return &detect.Detector{Name: "finishes", Mode: "FM-3.2", Finished: true, Run: func(p *detect.Pass) {
		for i, s := range p.Trace.Steps {
			if s.Kind == trace.KindMessage && s.Role == trace.RoleAssistant {
				p.Report(trace.Finding{Steps: []int{i}, Confidence: 1, Explanation: "finished unchecked"})
			}
		}
	}}
}

// startProxy serves a proxy in front of up.
func startProxy(t *testing.T, up string, cfg Config) (*Proxy, *httptest.Server) {
	t.Helper()
	u, err := url.Parse(up)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Upstream = u
	p := New(cfg)
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv
}

func post(t *testing.T, url, body string, header ...string) (*http.Response, string) {
	t.Helper()
	return postTo(t, url+ChatPath, body, header...)
}

func postTo(t *testing.T, url, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(out)
}
