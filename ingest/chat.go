package ingest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/faultline/faultline/trace"
)

// Chat transcripts are the message lists that OpenAI's chat completions
// API, Inspect AI, Docent and tau-bench write. Their shapes differ in
// details only, so one reader serves them all: each message becomes a
// system, message, reasoning, tool-call or tool-result step, and tool calls
// are paired with their results by call id, or by order where a format
// writes results without ids.

// chatMessage is one message in any of the shapes:
//   - OpenAI: {role, content, name, tool_calls: [{id, type, function: {name,
//     arguments as a JSON string}}], tool_call_id on tool messages}, the
//     legacy function_call and "function" role, refusal, and the
//     reasoning_content or reasoning text OpenAI-compatible servers add;
//   - Inspect AI and Docent: content as a string or a list of parts ({type:
//     text, text}, {type: reasoning, reasoning}, images), tool_calls: [{id,
//     function: the name, arguments as an object}], tool messages with
//     function and error;
//   - tau-bench (OpenAI's shape as litellm writes it): arguments as an
//     object, call ids reused, tool messages without tool_call_id.
type chatMessage struct {
	Role             string          `json:"role"`
	Name             string          `json:"name"`
	Content          json.RawMessage `json:"content"`
	ToolCalls        []chatToolCall  `json:"tool_calls"`
	FunctionCall     *chatToolCall   `json:"function_call"`
	ToolCallID       string          `json:"tool_call_id"`
	Function         json.RawMessage `json:"function"` // the tool's name, on Inspect's tool messages
	Error            json.RawMessage `json:"error"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	Refusal          string          `json:"refusal"`
}

// chatToolCall is a tool call in any of the shapes, and the legacy
// function_call {name, arguments}.
type chatToolCall struct {
	ID        string          `json:"id"`
	Function  json.RawMessage `json:"function"` // OpenAI: {name, arguments}; Inspect, Docent: the name
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     string          `json:"input"` // Docent's custom tool calls
	Custom    *struct {
		Name  string `json:"name"`
		Input string `json:"input"`
	} `json:"custom"` // OpenAI's custom tool calls
}

// nameArgs returns the tool's name and the arguments as the agent wrote
// them: a JSON string's content as it is, an object compacted.
func (c *chatToolCall) nameArgs() (string, string) {
	name, args, input := c.Name, c.Arguments, c.Input
	if c.Custom != nil {
		name, input = c.Custom.Name, c.Custom.Input
	}
	if s, ok := textOf(c.Function); ok && FirstByte(c.Function) == '"' {
		name = s
	} else if FirstByte(c.Function) == '{' {
		var fn struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal(c.Function, &fn) == nil {
			name, args = fn.Name, fn.Arguments
		}
	}
	if input != "" {
		return name, input
	}
	return name, rawText(args)
}

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
	var m chatMessage
	if FirstByte(raw) != '{' {
		c.r.report(c.r.at(lines), Error, "message %d should be an object, found %s; message skipped", i, JSONKind(raw))
		return
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		c.r.skipPart(lines, raw, err, fmt.Sprintf("message %d", i), "message")
		return
	}
	text, reasoning := chatParts(m.Content)
	if r, ok := textOf(m.Reasoning); ok {
		reasoning = joinNonEmpty(m.ReasoningContent, r, reasoning)
	} else {
		reasoning = joinNonEmpty(m.ReasoningContent, reasoning)
	}
	role := strings.ToLower(strings.TrimSpace(m.Role))
	switch role {
	case "system", "developer":
		// Standing instructions, which the detectors read as the task's rules.
		c.t.Append(trace.Step{Kind: trace.KindSystem, Role: role, Type: "instructions", Text: text})
	case "user", "human":
		c.t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleUser, Text: text})
	case "tool", "function", "ipython":
		name, _ := textOf(m.Function)
		step := trace.Step{Kind: trace.KindToolResult, Role: trace.RoleTool, Tool: firstNonEmpty(name, m.Name), CallID: m.ToolCallID, Text: text}
		if msg, failed := toolError(m.Error); failed {
			step.IsError = true
			step.Text = joinNonEmpty(text, msg)
		}
		c.result(step)
	default:
		// The assistant, or a role of the system's own: the agent speaking.
		agent := firstNonEmpty(m.Name, c.agent)
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
			step.Text, step.Type = joinNonEmpty(text, m.Refusal), "refusal"
		}
		// A message with nothing in it is kept when nothing else came of the
		// turn: a model that answered nothing is a finding (SYS-1).
		if step.Text != "" || len(calls) == 0 && reasoning == "" {
			c.t.Append(step)
		}
		for _, call := range calls {
			name, args := call.nameArgs()
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
	markFinal(t)
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
	if s, ok := textOf(raw); ok {
		return s, s != ""
	}
	return compactJSON(raw), true
}

// chatParts reads message content: a string, or a list of parts, split into
// the text and the reasoning (Inspect's and Docent's reasoning parts,
// Anthropic's thinking). Parts that are not text are named in brackets
// ("[image]") so that the message still shows they were there.
func chatParts(raw json.RawMessage) (text, reasoning string) {
	if s, ok := textOf(raw); ok {
		return s, ""
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return compactJSON(raw), ""
	}
	var texts, thoughts []string
	for _, raw := range parts {
		var p struct {
			Type      string `json:"type"`
			Text      string `json:"text"`
			Reasoning string `json:"reasoning"`
			Thinking  string `json:"thinking"`
			Refusal   string `json:"refusal"`
			Redacted  bool   `json:"redacted"`
		}
		if s, ok := textOf(raw); ok {
			texts = append(texts, s)
			continue
		}
		if json.Unmarshal(raw, &p) != nil {
			texts = append(texts, compactJSON(raw))
			continue
		}
		switch {
		case p.Type == "reasoning" || p.Type == "thinking":
			thought := firstNonEmpty(p.Reasoning, p.Thinking, p.Text)
			if p.Redacted {
				thought = "[redacted reasoning]"
			}
			thoughts = append(thoughts, thought)
		case p.Text != "" || p.Refusal != "":
			texts = append(texts, joinNonEmpty(p.Text, p.Refusal))
		case strings.HasSuffix(p.Type, "text") || p.Type == "refusal":
			// An empty text part says nothing.
		case strings.Contains(p.Type, "image"):
			texts = append(texts, "[image]")
		case p.Type != "":
			texts = append(texts, "["+p.Type+"]")
		}
	}
	return strings.Join(texts, "\n"), joinNonEmpty(thoughts...)
}

// joinNonEmpty joins the texts that are not empty, one a line.
func joinNonEmpty(texts ...string) string {
	var out []string
	for _, t := range texts {
		if strings.TrimSpace(t) != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n")
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
