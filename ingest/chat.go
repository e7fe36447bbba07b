package ingest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/faultline/faultline/ingest/internal/chat"
	"github.com/faultline/faultline/ingest/internal/jsontext"
	"github.com/faultline/faultline/trace"
)

// Chat transcripts are the message lists that OpenAI's chat completions
// API, Inspect AI, Docent and tau-bench write. Their shapes differ in
// details only, so one reader serves them all: each message becomes a
// system, message, reasoning, tool-call or tool-result step, and tool calls
// are paired with their results by call id, or by order where a format
// writes results without ids.

// chatLog builds a trace's steps from chat messages, one at a time.
type chatLog struct {
	t *trace.Trace
	r *record
	// agent names the speaker of the agent's messages when the messages do
	// not (a Docent transcript's name in a run of several).
	agent string
	open  []int // tool calls not yet answered, oldest first
}

// messages appends the messages of a JSON array that starts lines into the
// record; field names the array in reports.
func (c *chatLog) messages(raw json.RawMessage, lines int, field string) {
	msgs, err := jsonElements(raw)
	if err != nil {
		c.r.report(c.r.at(lines), Error, "field %q %v; messages skipped", field, err)
	}
	for i, m := range msgs {
		c.message(m.raw, lines+m.lines, i)
	}
}

// message appends the steps of one message that starts lines into the record.
func (c *chatLog) message(raw json.RawMessage, lines, i int) {
	var m chat.Message
	if FirstByte(raw) != '{' {
		c.r.report(c.r.at(lines), Error, "message %d should be an object, found %s; message skipped", i, JSONKind(raw))
		return
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		c.r.skipPart(lines, raw, err, fmt.Sprintf("message %d", i), "message")
		return
	}
	text, reasoning := chat.Parts(m.Content)
	if r, ok := jsontext.TextOf(m.Reasoning); ok {
		reasoning = jsontext.JoinNonEmpty(m.ReasoningContent, r, reasoning)
	} else {
		reasoning = jsontext.JoinNonEmpty(m.ReasoningContent, reasoning)
	}
	role := strings.ToLower(strings.TrimSpace(m.Role))
	switch role {
	case "system", "developer":
		// Standing instructions, which the detectors read as the task's rules.
		c.t.Append(trace.Step{Kind: trace.KindSystem, Role: role, Type: "instructions", Text: text})
	case "user", "human":
		c.t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleUser, Text: text})
	case "tool", "function", "ipython":
		name, _ := jsontext.TextOf(m.Function)
		step := trace.Step{Kind: trace.KindToolResult, Role: trace.RoleTool, Tool: jsontext.FirstNonEmpty(name, m.Name), CallID: m.ToolCallID, Text: text}
		if msg, failed := toolError(m.Error); failed {
			step.IsError = true
			step.Text = jsontext.JoinNonEmpty(text, msg)
		}
		c.result(step)
	default:
		// The assistant, or a role of the system's own: the agent speaking.
		agent := jsontext.FirstNonEmpty(m.Name, c.agent)
		if role != "assistant" && role != "ai" && role != "model" && agent == "" {
			agent = m.Role
		}
		calls := m.ToolCalls
		if m.FunctionCall != nil {
			calls = append(calls, *m.FunctionCall)
		}
		if reasoning != "" {
			c.t.Append(trace.Step{Kind: trace.KindReasoning, Role: trace.RoleAssistant, Agent: agent, Text: reasoning})
		}
		step := trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant, Agent: agent, Text: text}
		if m.Refusal != "" {
			step.Text, step.Type = jsontext.JoinNonEmpty(text, m.Refusal), "refusal"
		}
		// A message with nothing in it is kept when nothing else came of the
		// turn: a model that answered nothing is a finding (SYS-1).
		if step.Text != "" || len(calls) == 0 && reasoning == "" {
			c.t.Append(step)
		}
		for _, call := range calls {
			name, args := call.NameArgs()
			c.open = append(c.open, len(c.t.Steps))
			c.t.Append(trace.Step{Kind: trace.KindToolCall, Role: trace.RoleAssistant, Agent: agent, Tool: name, Args: args, CallID: call.ID})
		}
	}
}

// result appends a tool result. A result without a call id answers the
// oldest open call: tau-bench's logs and the legacy function messages
// return results in the order of the calls. The pair gets an id Link
// matches: the call's own when no other open call shares it, otherwise one
// made unique with the call's step.
func (c *chatLog) result(step trace.Step) {
	if step.CallID != "" {
		// Link pairs a result with the latest open call of its id.
		for k := len(c.open) - 1; k >= 0; k-- {
			if c.t.Steps[c.open[k]].CallID == step.CallID {
				c.open = append(c.open[:k], c.open[k+1:]...)
				break
			}
		}
	} else if len(c.open) > 0 {
		call := &c.t.Steps[c.open[0]]
		c.open = c.open[1:]
		shared := false
		for _, k := range c.open {
			shared = shared || c.t.Steps[k].CallID == call.CallID
		}
		if call.CallID == "" || shared {
			call.CallID = fmt.Sprintf("%s#%d", call.CallID, call.Index)
		}
		step.CallID = call.CallID
	}
	c.t.Append(step)
}

// finishTrace marks the final answer and pairs calls with results,
// reporting what does not pair at the record.
func finishTrace(t *trace.Trace, r *record) {
	chat.MarkFinal(t)
	for _, p := range t.Link() {
		r.report(r.line, Notice, "trace %s: %s", t.ID, p)
	}
}

// firstUserText is the text of a trace's first user message: the task, in
// formats that state it nowhere else.
func firstUserText(t *trace.Trace) string {
	for _, s := range t.Steps {
		if s.Role == trace.RoleUser {
			return s.Text
		}
	}
	return ""
}

// toolError reads a tool message's error: Inspect's {type, message}, or text.
func toolError(raw json.RawMessage) (string, bool) {
	switch FirstByte(raw) {
	case 0, 'n':
		return "", false
	case '{':
		var e struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &e) == nil {
			return strings.TrimSpace(e.Type + ": " + e.Message), true
		}
	}
	if s, ok := jsontext.TextOf(raw); ok {
		return s, s != ""
	}
	return jsontext.Compact(raw), true
}
