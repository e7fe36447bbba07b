// Package chat reads chat messages as JSON, in the shapes the chat formats
// of package ingest read and that OpenTelemetry GenAI attributes and events
// also carry (package ingest/otel). It sits below both so that the mapping
// of spans does not import the formats for it.
package chat

import (
	"encoding/json"
	"strings"

	"github.com/faultline/faultline/ingest/internal/jsontext"
)

// Message is one message in any of the shapes:
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
type Message struct {
	Role             string          `json:"role"`
	Name             string          `json:"name"`
	Content          json.RawMessage `json:"content"`
	ToolCalls        []ToolCall      `json:"tool_calls"`
	FunctionCall     *ToolCall       `json:"function_call"`
	ToolCallID       string          `json:"tool_call_id"`
	Function         json.RawMessage `json:"function"` // the tool's name, on Inspect's tool messages
	Error            json.RawMessage `json:"error"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        json.RawMessage `json:"reasoning"`
	Refusal          string          `json:"refusal"`
}

// ToolCall is a tool call in any of the shapes, and the legacy
// function_call {name, arguments}.
type ToolCall struct {
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

// NameArgs returns the tool's name and the arguments as the agent wrote
// them: a JSON string's content as it is, an object compacted.
func (c *ToolCall) NameArgs() (string, string) {
	name, args, input := c.Name, c.Arguments, c.Input
	if c.Custom != nil {
		name, input = c.Custom.Name, c.Custom.Input
	}
	if s, ok := jsontext.TextOf(c.Function); ok && jsontext.FirstByte(c.Function) == '"' {
		name = s
	} else if jsontext.FirstByte(c.Function) == '{' {
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
	return name, jsontext.RawText(args)
}

// Parts reads message content: a string, or a list of parts, split into
// the text and the reasoning (Inspect's and Docent's reasoning parts,
// Anthropic's thinking). Parts that are not text are named in brackets
// ("[image]") so that the message still shows they were there.
func Parts(raw json.RawMessage) (text, reasoning string) {
	if s, ok := jsontext.TextOf(raw); ok {
		return s, ""
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return jsontext.Compact(raw), ""
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
		if s, ok := jsontext.TextOf(raw); ok {
			texts = append(texts, s)
			continue
		}
		if json.Unmarshal(raw, &p) != nil {
			texts = append(texts, jsontext.Compact(raw))
			continue
		}
		switch {
		case p.Type == "reasoning" || p.Type == "thinking":
			thought := jsontext.FirstNonEmpty(p.Reasoning, p.Thinking, p.Text)
			if p.Redacted {
				thought = "[redacted reasoning]"
			}
			thoughts = append(thoughts, thought)
		case p.Text != "" || p.Refusal != "":
			texts = append(texts, jsontext.JoinNonEmpty(p.Text, p.Refusal))
		case strings.HasSuffix(p.Type, "text") || p.Type == "refusal":
			// An empty text part says nothing.
		case strings.Contains(p.Type, "image"):
			texts = append(texts, "[image]")
		case p.Type != "":
			texts = append(texts, "["+p.Type+"]")
		}
	}
	return strings.Join(texts, "\n"), jsontext.JoinNonEmpty(thoughts...)
}
