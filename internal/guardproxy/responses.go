package guardproxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/faultline/faultline/guard"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

// responsesRequest is a Responses API request. Its conversation's steps
// are the instructions' (first, when there are some) and the items'.
type responsesRequest struct {
	conversation
	// items is the input as a list of items (a string input is the user's
	// message).
	items        []json.RawMessage
	instructions string
	// previous is the answer the request continues after: the input then
	// holds only what is new since.
	previous string
}

// parseResponses reads a Responses API request.
func parseResponses(body []byte) (apiRequest, error) {
	var head struct {
		Input        json.RawMessage `json:"input"`
		Instructions string          `json:"instructions"`
		Model        string          `json:"model"`
		Stream       bool            `json:"stream"`
		Previous     string          `json:"previous_response_id"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return nil, fmt.Errorf("the request body is not a Responses API request: %w", err)
	}
	r := &responsesRequest{conversation: conversation{raw: body, model: head.Model, stream: head.Stream}, instructions: head.Instructions, previous: head.Previous}
	var text string
	switch {
	case len(head.Input) == 0 || string(head.Input) == "null":
		return nil, errors.New("the request has no input")
	case json.Unmarshal(head.Input, &text) == nil:
		r.items = []json.RawMessage{textMessage("user", text)}
	default:
		if err := json.Unmarshal(head.Input, &r.items); err != nil {
			return nil, fmt.Errorf("the request's input is neither a string nor a list of items: %w", err)
		}
	}
	items := r.items
	if r.instructions != "" {
		// The instructions are the conversation's system message.
		items = append([]json.RawMessage{textMessage("system", r.instructions)}, items...)
	}
	var err error
	if r.steps, err = itemSteps(items); err != nil {
		return nil, err
	}
	r.seen = fingerprints(r.steps)
	return r, nil
}

// key names the session: by the headers, else by the chain of answers the
// request continues, else by the conversation's opening. A chain the proxy
// does not know (it restarted, or forgot) is named by its last answer, so
// that its requests from then on are one session.
func (r *responsesRequest) key(p *Proxy, h http.Header) string {
	if k, ok := headerKey(h); ok {
		return k
	}
	if r.previous == "" {
		return openingKey(r.steps)
	}
	if k, ok := p.chains.lookup(r.previous); ok {
		return k
	}
	return "response-" + r.previous
}

// continues reports whether the request continues the session's run: after
// the last answer the client was given, or, a request without a previous
// answer resending the whole conversation, with a history that extends
// what the session holds. A request after an earlier answer branches off
// the run, and starts a new one.
func (r *responsesRequest) continues(e *entry) bool {
	if e.s == nil {
		return false
	}
	if r.previous != "" {
		return r.previous == e.response
	}
	return r.conversation.continues(e)
}

func (r *responsesRequest) start() guard.Start {
	return guard.Start{Task: task(r.steps), Model: r.model, Format: "openai-responses"}
}

// fresh returns the request's new steps. A request after a previous answer
// carries only new items, and its instructions again: they are new only
// when they changed.
func (r *responsesRequest) fresh(e *entry) ([]trace.Step, []uint64) {
	if r.previous == "" {
		e.instructions = r.instructions
		return r.conversation.fresh(e)
	}
	steps := r.steps
	if r.instructions != "" && r.instructions == e.instructions {
		steps = steps[1:]
	}
	if r.instructions != "" {
		e.instructions = r.instructions
	}
	return steps, append(slices.Clone(e.seen), fingerprints(steps)...)
}

// body is the request with items added after the client's input; a
// string input becomes the user's message item.
func (r *responsesRequest) body(extra ...json.RawMessage) ([]byte, error) {
	return r.rewrite("input", append(slices.Clone(r.items), extra...))
}

// response is the part of a Responses API response the guard reads.
type response struct {
	ID     string          `json:"id"`
	Output json.RawMessage `json:"output"`
	Usage  *usage          `json:"usage"`
}

func (r *responsesRequest) reply(body []byte) (reply, error) {
	var resp response
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.Output) == 0 || string(resp.Output) == "null" {
		return reply{}, errNotResponse
	}
	return resp.reply(), nil
}

// errNotResponse is a 2xx answer the guard cannot read as a response.
var errNotResponse = errors.New("a body that is not a response")

func (resp *response) reply() reply {
	rp := reply{out: resp.Output, id: resp.ID}
	if resp.Usage != nil {
		rp.tokens = resp.Usage.TotalTokens
	}
	return rp
}

// turn maps a response's output items to steps. Asked again at a finish
// gate, the model is given back its output but for its reasoning items,
// which the API takes back only with their encrypted content, and does
// not need once the model has answered without a call.
func (r *responsesRequest) turn(out json.RawMessage) (turn, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(out, &items); err != nil {
		return turn{}, fmt.Errorf("the response's output is not a list of items: %w", err)
	}
	steps, err := itemSteps(items)
	if err != nil {
		return turn{}, err
	}
	var again []json.RawMessage
	for _, it := range items {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(it, &head) == nil && head.Type != "reasoning" {
			again = append(again, it)
		}
	}
	return turn{steps: steps, finishing: finishes(steps), again: again}, nil
}

func (r *responsesRequest) newStream() streamAnswer { return &responseStream{} }

func (r *responsesRequest) answerKind() string { return "a response" }

// item is a Responses API input or output item, of the types the guard
// reads.
type item struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
	Summary   []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

// chatMessage is an item as the chat message that says the same.
type chatMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content,omitempty"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ToolCalls        []chatCall      `json:"tool_calls,omitempty"`
	ToolCallID       string          `json:"tool_call_id,omitempty"`
}

// chatCall is a tool call in the flat shape chat messages may also take
// (ingest reads it): a function's arguments, or a custom tool's input.
type chatCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments,omitempty"`
	Input     string `json:"input,omitempty"`
}

// itemSteps maps Responses API items to steps: each item becomes the chat
// message that says the same, read as the chat path reads messages, so
// that both APIs give a conversation the same steps. Messages (content as
// a string or input_text, output_text and refusal parts), function and
// custom tool calls and their outputs, and reasoning summaries are read;
// items of the API's own tools, which it runs itself, are passed over.
func itemSteps(items []json.RawMessage) ([]trace.Step, error) {
	msgs := make([]chatMessage, 0, len(items))
	for i, raw := range items {
		var it item
		if err := json.Unmarshal(raw, &it); err != nil {
			return nil, fmt.Errorf("item %d of the input: %w", i, err)
		}
		switch it.Type {
		case "", "message":
			msgs = append(msgs, chatMessage{Role: it.Role, Content: it.Content})
		case "function_call", "custom_tool_call":
			call := chatCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments, Input: it.Input}
			msgs = append(msgs, chatMessage{Role: "assistant", ToolCalls: []chatCall{call}})
		case "function_call_output", "custom_tool_call_output":
			msgs = append(msgs, chatMessage{Role: "tool", ToolCallID: it.CallID, Content: it.Output})
		case "reasoning":
			var texts []string
			for _, s := range it.Summary {
				texts = append(texts, s.Text)
			}
			if summary := strings.Join(texts, "\n"); summary != "" {
				msgs = append(msgs, chatMessage{Role: "assistant", ReasoningContent: summary})
			}
		}
	}
	raw, err := json.Marshal(msgs)
	if err != nil {
		return nil, fmt.Errorf("reading the items as messages: %w", err)
	}
	return ingest.ChatSteps(raw)
}

// chainLimit bounds the answers the proxy remembers the sessions of. A
// forgotten answer costs only its chain's session: the next request after
// it starts one anew.
const chainLimit = 1 << 16

// chains maps the id of the last answer each Responses API session was
// given to the session, for the request that continues after it.
type chains struct {
	mu   sync.Mutex
	byID map[string]string
}

func newChains() *chains { return &chains{byID: map[string]string{}} }

func (c *chains) lookup(id string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.byID[id]
	return k, ok
}

// link makes id the session key's last answer, in place of prev.
func (c *chains) link(prev, id, key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byID, prev)
	for k := range c.byID {
		if len(c.byID) < chainLimit {
			break
		}
		// Sessions evicted leave their last answer behind; over the limit,
		// any answer is forgotten.
		delete(c.byID, k)
	}
	c.byID[id] = key
}
