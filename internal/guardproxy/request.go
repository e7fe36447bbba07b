package guardproxy

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

// chatRequest is a chat completions request. Its body is kept as the
// client wrote it: what the proxy does not change reaches the upstream
// untouched, and a request it adds nothing to is not written again.
type chatRequest struct {
	raw      []byte
	messages json.RawMessage
	model    string
	stream   bool
	// steps are the messages as steps (see ingest.ChatSteps), seen their
	// fingerprints.
	steps []trace.Step
	seen  []uint64
}

// parseRequest reads a chat completions request.
func parseRequest(body []byte) (*chatRequest, error) {
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
	return &chatRequest{raw: body, messages: head.Messages, model: head.Model, stream: head.Stream, steps: steps, seen: fingerprints(steps)}, nil
}

// body is the request with messages added after the client's, its other
// fields as they were.
func (c *chatRequest) body(extra ...json.RawMessage) ([]byte, error) {
	var fields map[string]json.RawMessage
	var msgs []json.RawMessage
	if err := json.Unmarshal(c.raw, &fields); err != nil {
		return nil, fmt.Errorf("rewriting the request: %w", err)
	}
	if err := json.Unmarshal(c.messages, &msgs); err != nil {
		return nil, fmt.Errorf("rewriting the request's messages: %w", err)
	}
	all, err := json.Marshal(append(msgs, extra...))
	if err != nil {
		return nil, fmt.Errorf("adding to the request's messages: %w", err)
	}
	fields["messages"] = all
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("writing the request: %w", err)
	}
	return out, nil
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
	for _, s := range steps {
		if s.Kind == trace.KindToolCall {
			return steps, false, nil
		}
	}
	return steps, true, nil
}
