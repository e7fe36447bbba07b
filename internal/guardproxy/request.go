package guardproxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/faultline/faultline/guard"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

// conversation is what a request of either API holds: its body, kept as
// the client wrote it (what the proxy does not change reaches the
// upstream untouched, and a request it adds nothing to is not written
// again), and its conversation as steps (see ingest.ChatSteps), seen
// their fingerprints.
type conversation struct {
	raw    []byte
	model  string
	stream bool
	steps  []trace.Step
	seen   []uint64
}

func (c *conversation) streamed() bool { return c.stream }

// continues reports whether the request's history extends what the
// session holds: the request resends the whole conversation.
func (c *conversation) continues(e *entry) bool { return e.s != nil && extends(c.seen, e.seen) }

func (c *conversation) fresh(e *entry) ([]trace.Step, []uint64) { return c.steps[len(e.seen):], c.seen }

// rewrite is the request with its list field replaced, its other fields
// as they were.
func (c *conversation) rewrite(field string, list []json.RawMessage) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(c.raw, &fields); err != nil {
		return nil, fmt.Errorf("rewriting the request: %w", err)
	}
	all, err := json.Marshal(list)
	if err != nil {
		return nil, fmt.Errorf("adding to the request's %s: %w", field, err)
	}
	fields[field] = all
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("writing the request: %w", err)
	}
	return out, nil
}

// chatRequest is a chat completions request.
type chatRequest struct {
	conversation
	messages json.RawMessage
}

// parseChat reads a chat completions request.
func parseChat(body []byte) (apiRequest, error) {
	var head struct {
		Messages json.RawMessage `json:"messages"`
		Model    string          `json:"model"`
		Stream   bool            `json:"stream"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return nil, fmt.Errorf("the request body is not a chat completions request: %w", err)
	}
	if len(head.Messages) == 0 {
		return nil, errors.New("the request has no messages")
	}
	steps, err := ingest.ChatSteps(head.Messages)
	if err != nil {
		return nil, err
	}
	return &chatRequest{conversation{raw: body, model: head.Model, stream: head.Stream, steps: steps, seen: fingerprints(steps)}, head.Messages}, nil
}

func (c *chatRequest) key(_ *Proxy, h http.Header) string { return sessionKey(h, c.steps) }

func (c *chatRequest) start() guard.Start {
	return guard.Start{Task: task(c.steps), Model: c.model, Format: "openai-chat"}
}

func (c *chatRequest) reply(body []byte) (reply, error) {
	message, tokens, err := parseCompletion(body)
	return reply{out: message, tokens: tokens}, err
}

func (c *chatRequest) turn(message json.RawMessage) (turn, error) {
	steps, finishing, err := answerSteps(message)
	return turn{steps: steps, finishing: finishing, again: []json.RawMessage{message}}, err
}

func (c *chatRequest) newStream() streamAnswer { return &accumulator{} }

func (c *chatRequest) answerKind() string { return "a chat completion" }

// body is the request with messages added after the client's.
func (c *chatRequest) body(extra ...json.RawMessage) ([]byte, error) {
	var msgs []json.RawMessage
	if err := json.Unmarshal(c.messages, &msgs); err != nil {
		return nil, fmt.Errorf("rewriting the request's messages: %w", err)
	}
	return c.rewrite("messages", append(msgs, extra...))
}

// task is the conversation's first user message: what the agent was asked.
func task(steps []trace.Step) string {
	for _, s := range steps {
		if s.Kind == trace.KindMessage && s.Role == trace.RoleUser {
			return s.Text
		}
	}
	return ""
}

// completion is the part of a chat completion the guard reads.
type completion struct {
	Choices []struct {
		Message json.RawMessage `json:"message"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
}

type usage struct {
	TotalTokens int `json:"total_tokens"`
}

// errNotCompletion is a 2xx answer the guard cannot read as a chat
// completion.
var errNotCompletion = errors.New("a body that is not a chat completion")

// parseCompletion returns a chat completion's first message and the tokens
// it cost.
func parseCompletion(body []byte) (json.RawMessage, int, error) {
	var c completion
	if err := json.Unmarshal(body, &c); err != nil || len(c.Choices) == 0 || len(c.Choices[0].Message) == 0 || string(c.Choices[0].Message) == "null" {
		return nil, 0, errNotCompletion
	}
	tokens := 0
	if c.Usage != nil {
		tokens = c.Usage.TotalTokens
	}
	return c.Choices[0].Message, tokens, nil
}

// answerSteps maps the model's message to steps, as its next request will
// carry it, and reports whether it tries to finish: it calls no tool.
func answerSteps(message json.RawMessage) ([]trace.Step, bool, error) {
	steps, err := ingest.ChatSteps(json.RawMessage("[" + string(message) + "]"))
	if err != nil {
		return nil, false, err
	}
	return steps, finishes(steps), nil
}

// finishes reports whether a model's turn tries to end the run: it calls
// no tool.
func finishes(steps []trace.Step) bool {
	return !slices.ContainsFunc(steps, func(s trace.Step) bool { return s.Kind == trace.KindToolCall })
}
