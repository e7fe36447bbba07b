// Package judgetest provides a fake OpenAI-compatible chat-completions
// endpoint with scripted replies, and helpers that write answers to the
// judge's prompts, for tests and benchmarks of the judge.
package judgetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Call is one request the server received.
type Call struct {
	N              int // 1 for the first call
	Auth           string
	Model          string
	Messages       []Message
	ResponseFormat json.RawMessage
	Temperature    *float64
	Seed           *int
}

// Message is a chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// User returns the call's first user message: the trace as the judge shows it.
func (c Call) User() string {
	for _, m := range c.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// Last returns the call's last message.
func (c Call) Last() Message {
	if len(c.Messages) == 0 {
		return Message{}
	}
	return c.Messages[len(c.Messages)-1]
}

// FormatType is the response_format type the call asked for ("" for none).
func (c Call) FormatType() string {
	var rf struct {
		Type string `json:"type"`
	}
	json.Unmarshal(c.ResponseFormat, &rf)
	return rf.Type
}

// Reply is what the server answers to a call.
type Reply struct {
	Status  int               // default 200
	Header  map[string]string // e.g. Retry-After
	Content string            // the completion's text, when Body is empty
	Body    string            // the raw response body, overriding Content
	Delay   time.Duration     // wait this long before answering (or until the client gives up)
	// InputTokens and OutputTokens are reported as usage when set.
	InputTokens, OutputTokens int
}

// Server is a fake endpoint. Script decides each reply; it is called with
// the server's lock held, so it may keep state without its own.
type Server struct {
	*httptest.Server
	Script  func(Call) Reply
	Latency time.Duration // added to every reply

	mu    sync.Mutex
	calls []Call
}

// NewServer starts a server that answers with script.
func NewServer(script func(Call) Reply) *Server {
	s := &Server{Script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// URL is the API root to give the judge.
func (s *Server) URL() string { return s.Server.URL + "/v1" }

// Calls returns the calls received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Reset forgets the calls received.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = nil
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"no such route"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model          string          `json:"model"`
		Messages       []Message       `json:"messages"`
		ResponseFormat json.RawMessage `json:"response_format"`
		Temperature    *float64        `json:"temperature"`
		Seed           *int            `json:"seed"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	call := Call{N: len(s.calls) + 1, Auth: r.Header.Get("Authorization"), Model: req.Model, Messages: req.Messages,
		ResponseFormat: req.ResponseFormat, Temperature: req.Temperature, Seed: req.Seed}
	s.calls = append(s.calls, call)
	reply := s.Script(call)
	s.mu.Unlock()
	select {
	case <-time.After(s.Latency + reply.Delay):
	case <-r.Context().Done():
		return
	}
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	if reply.Body != "" {
		io.WriteString(w, reply.Body)
		return
	}
	content, _ := json.Marshal(reply.Content)
	fmt.Fprintf(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}]`, content)
	if reply.InputTokens > 0 || reply.OutputTokens > 0 {
		fmt.Fprintf(w, `,"usage":{"prompt_tokens":%d,"completion_tokens":%d}`, reply.InputTokens, reply.OutputTokens)
	}
	io.WriteString(w, "}\n")
}

// Mode is a verdict on one mode in an answer written by Answer.
type Mode struct {
	Present     bool     `json:"present"`
	Confidence  float64  `json:"confidence"`
	Steps       []string `json:"steps"`
	Quote       string   `json:"quote"`
	Explanation string   `json:"explanation"`
}

// Codes are the 14 mode codes.
var Codes = []string{"FM-1.1", "FM-1.2", "FM-1.3", "FM-1.4", "FM-1.5", "FM-2.1", "FM-2.2", "FM-2.3", "FM-2.4", "FM-2.5", "FM-2.6", "FM-3.1", "FM-3.2", "FM-3.3"}

// SystemFailure is the system failure verdict of an answer.
type SystemFailure struct {
	Code string `json:"code"`
	Mode
}

// Answer writes an answer: no system failure, every mode absent except
// those given.
func Answer(present map[string]Mode) string {
	return answer(SystemFailure{Mode: Mode{Confidence: 0.9, Steps: []string{}, Explanation: "Nothing outside the agent failed."}}, present)
}

// SystemFailureAnswer writes an answer that the run is a system failure,
// with every mode absent except those given (which the judge drops).
func SystemFailureAnswer(sys SystemFailure, present map[string]Mode) string {
	sys.Present = true
	return answer(sys, present)
}

func answer(sys SystemFailure, present map[string]Mode) string {
	modes := map[string]Mode{}
	for _, c := range Codes {
		modes[c] = Mode{Confidence: 0.8, Steps: []string{}, Explanation: "Nothing in the steps shows it."}
	}
	for c, m := range present {
		modes[c] = m
	}
	b, _ := json.Marshal(map[string]any{"system_failure": sys, "modes": modes, "summary": "The agent investigated and wrote an answer.", "task_success": "failure"})
	return string(b)
}

var stepBlock = regexp.MustCompile(`(?m)^\[S(\d+) [^\]]*\]\n(.+)$`)

// Evidence finds a step the prompt shows and a quote from it: the first
// step whose first line has at least four words, and those words. It
// returns "" when there is none.
func Evidence(prompt string) (step, quote string) {
	for _, m := range stepBlock.FindAllStringSubmatch(prompt, -1) {
		words := strings.Fields(m[2])
		if len(words) < 4 || strings.HasPrefix(m[2], "(identical to") || strings.HasPrefix(m[2], "[…") {
			continue
		}
		return "S" + m[1], strings.Join(words[:4], " ")
	}
	return "", ""
}

// ValidAnswer answers a prompt correctly: FM-1.3 present with evidence taken
// from the prompt, every other mode absent.
func ValidAnswer(prompt string) string {
	step, quote := Evidence(prompt)
	if step == "" {
		return Answer(nil)
	}
	return Answer(map[string]Mode{"FM-1.3": {Present: true, Confidence: 0.9, Steps: []string{step}, Quote: quote, Explanation: "The same step is done twice."}})
}

// Steps lists the step numbers a prompt shows, in order.
func Steps(prompt string) []int {
	var out []int
	for _, m := range stepBlock.FindAllStringSubmatch(prompt, -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}
