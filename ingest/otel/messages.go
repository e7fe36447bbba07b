package otel

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/faultline/faultline/ingest/internal/chat"
	"github.com/faultline/faultline/ingest/internal/jsontext"
	"github.com/faultline/faultline/internal/jsonscan"
	"github.com/faultline/faultline/trace"
)

// normalizeRole maps the roles frameworks write to faultline's, or to def
// when there is none.
func normalizeRole(role, def string) string {
	switch strings.ToLower(role) {
	case "":
		return def
	case "model", "ai", "bot":
		return trace.RoleAssistant
	case "human":
		return trace.RoleUser
	case "developer":
		return trace.RoleSystem
	case "function":
		return trace.RoleTool
	}
	return strings.ToLower(role)
}

// message is one chat message in whichever vocabulary it came.
type message struct {
	Role      string
	Text      string
	Reasoning string
	Calls     []toolCall
	Results   []toolResult
}

type toolCall struct{ ID, Name, Args string }

// key identifies a call: by its id, or by what it asks when it has none.
func (c toolCall) key(agent string) string {
	if c.ID != "" {
		return c.ID
	}
	return "\x00" + agent + "\x00" + c.Name + "\x00" + c.Args
}

type toolResult struct {
	ID, Text string
	Failed   bool
}

func (r toolResult) key() string {
	if r.ID != "" {
		return r.ID
	}
	return "\x00" + r.Text
}

// inputMessages reads the messages a span was given, from the first
// vocabulary that has them.
func (m *mapper) inputMessages(s *Span) []message {
	if raw := s.Attrs["gen_ai.input.messages"]; raw != "" {
		return m.jsonMessages(s, "gen_ai.input.messages", raw, trace.RoleUser)
	}
	if msgs := indexedMessages(s.Attrs, "gen_ai.prompt.", "", trace.RoleUser); len(msgs) > 0 {
		return msgs
	}
	if msgs := indexedMessages(s.Attrs, "llm.input_messages.", "message.", trace.RoleUser); len(msgs) > 0 {
		return msgs
	}
	return m.eventMessages(s, "gen_ai.content.prompt", "gen_ai.prompt", trace.RoleUser)
}

// outputMessages reads the messages a span produced.
func (m *mapper) outputMessages(s *Span) []message {
	if raw := s.Attrs["gen_ai.output.messages"]; raw != "" {
		return m.jsonMessages(s, "gen_ai.output.messages", raw, trace.RoleAssistant)
	}
	if msgs := indexedMessages(s.Attrs, "gen_ai.completion.", "", trace.RoleAssistant); len(msgs) > 0 {
		return msgs
	}
	if msgs := indexedMessages(s.Attrs, "llm.output_messages.", "message.", trace.RoleAssistant); len(msgs) > 0 {
		return msgs
	}
	return m.eventMessages(s, "gen_ai.content.completion", "gen_ai.completion", trace.RoleAssistant)
}

// eventMessages reads the older prompt and completion span events, which
// hold the messages as JSON in one attribute, and the per-message events
// (gen_ai.user.message, gen_ai.choice, ...) of v1.28 to v1.36.
func (m *mapper) eventMessages(s *Span, event, attr, role string) []message {
	var out []message
	for _, e := range s.Events {
		switch {
		case e.Name == event && e.Attrs[attr] != "":
			out = append(out, m.jsonMessages(s, event, e.Attrs[attr], role)...)
		case role == trace.RoleUser && strings.HasPrefix(e.Name, "gen_ai.") && strings.HasSuffix(e.Name, ".message"):
			r := strings.TrimSuffix(strings.TrimPrefix(e.Name, "gen_ai."), ".message")
			out = append(out, eventMessage(e, r))
		case role == trace.RoleAssistant && e.Name == "gen_ai.choice":
			out = append(out, eventMessage(e, trace.RoleAssistant))
		}
	}
	return out
}

// eventMessage reads a per-message event: its content, or its message body
// flattened into attributes, and its tool calls.
func eventMessage(e Event, role string) message {
	msg := message{Role: normalizeRole(e.Attrs["role"], role)}
	body := e.Attrs["content"]
	if body == "" {
		body = e.Attrs["message"]
	}
	msg.Text = body
	if strings.HasPrefix(strings.TrimSpace(body), "{") {
		if parsed, err := parseJSONMessages(body, msg.Role); err == nil {
			msg = parsed[0]
		}
	}
	if id := e.Attrs["id"]; id != "" && msg.Role == trace.RoleTool {
		msg.Results, msg.Text = []toolResult{{ID: id, Text: msg.Text}}, ""
	}
	if calls := e.Attrs["tool_calls"]; calls != "" {
		if parsed, err := parseJSONMessages(`[{"role":"assistant","tool_calls":`+calls+`}]`, role); err == nil && len(parsed) == 1 {
			msg.Calls = append(msg.Calls, parsed[0].Calls...)
		}
	}
	return msg
}

func (m *mapper) jsonMessages(s *Span, where, raw, role string) []message {
	msgs, _ := m.decodeMessages(s, where, raw, role)
	return msgs
}

// decodeMessages reads raw as JSON messages, or keeps it as the text of one
// message with a note when it is not: ok tells which.
func (m *mapper) decodeMessages(s *Span, where, raw, role string) (msgs []message, ok bool) {
	msgs, err := parseJSONMessages(raw, role)
	if err != nil {
		m.notes = append(m.notes, fmt.Sprintf("span %s %q: %s is not a list of messages (%v); kept as text", s.SpanID, s.Name, where, err))
		return []message{{Role: role, Text: raw}}, false
	}
	return msgs, true
}

// jsonMessage is a chat message as JSON: the GenAI conventions' form
// (role, parts) or the OpenAI form that ingest's chat formats read (role,
// content, tool_calls, tool_call_id; chat.Message), which older events and
// frameworks write.
type jsonMessage struct {
	chat.Message
	Parts []jsonPart `json:"parts"`
}

// jsonPart is a message part of the GenAI conventions: text, reasoning, a
// tool call or a tool call's response.
type jsonPart struct {
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Response  json.RawMessage `json:"response"`
}

// The messages of a span are read in one pass (package jsonscan): each
// model call's input repeats the conversation so far, and encoding/json,
// which checks a document before decoding it and decodes each string
// twice, was a sixth of what the receiver spent.

// jsonMessages is a list of messages.
type jsonMessages []jsonMessage

var (
	jsonMessageFields = append(slices.Clone(chat.MessageFields), "parts")
	jsonPartFields    = jsonscan.FieldNames[jsonPart]()
)

func (list *jsonMessages) Scan(s *jsonscan.Scanner) bool {
	return jsonscan.List(s, (*[]jsonMessage)(list), func(m *jsonMessage, key []byte) bool { return m.member(s, key) })
}

func (m *jsonMessage) Scan(s *jsonscan.Scanner) bool {
	return s.Object(func(key []byte) bool { return m.member(s, key) })
}

func (m *jsonMessage) member(s *jsonscan.Scanner, key []byte) bool {
	if string(key) == "parts" {
		// Given twice, encoding/json decodes the second list into the
		// first one's parts: its reading.
		return m.Parts == nil && m.scanParts(s)
	}
	if ok, known := m.Message.ScanMember(s, key); known {
		return ok
	}
	return s.Other(key, jsonMessageFields)
}

func (m *jsonMessage) scanParts(s *jsonscan.Scanner) bool {
	return jsonscan.List(s, &m.Parts, func(p *jsonPart, key []byte) bool {
		switch string(key) {
		case "type":
			return s.StringInto(&p.Type)
		case "content":
			return s.RawInto((*[]byte)(&p.Content))
		case "id":
			return s.StringInto(&p.ID)
		case "name":
			return s.StringInto(&p.Name)
		case "arguments":
			return s.RawInto((*[]byte)(&p.Arguments))
		case "response":
			return s.RawInto((*[]byte)(&p.Response))
		}
		return s.Other(key, jsonPartFields)
	})
}

func parseJSONMessages(raw, role string) ([]message, error) {
	var list jsonMessages
	var s jsonscan.Scanner
	trimmed := strings.TrimSpace(raw)
	switch {
	case strings.HasPrefix(trimmed, "["):
		if err := jsonscan.Unmarshal(&s, []byte(trimmed), &list); err != nil {
			return nil, err
		}
	case strings.HasPrefix(trimmed, "{"):
		var one jsonMessage
		if err := jsonscan.Unmarshal(&s, []byte(trimmed), &one); err != nil {
			return nil, err
		}
		list = jsonMessages{one}
	default:
		return []message{{Role: role, Text: raw}}, nil
	}
	out := make([]message, 0, len(list))
	for _, jm := range list {
		msg := message{Role: normalizeRole(jm.Role, role)}
		msg.addParts(jm.Parts)
		text, reasoning := chat.Parts(jm.Content)
		msg.Text = jsontext.JoinNonEmpty(msg.Text, text)
		msg.Reasoning = jsontext.JoinNonEmpty(msg.Reasoning, reasoning, jm.ReasoningContent)
		for _, c := range jm.ToolCalls {
			name, args := c.NameArgs()
			msg.Calls = append(msg.Calls, toolCall{ID: c.ID, Name: name, Args: args})
		}
		if msg.Role == trace.RoleTool && jm.ToolCallID != "" {
			msg.Results = append(msg.Results, toolResult{ID: jm.ToolCallID, Text: msg.Text})
			msg.Text = ""
		}
		out = append(out, msg)
	}
	return out, nil
}

// addParts reads the GenAI conventions' parts into msg. Parts that are not
// text (images, files) are named in brackets so the message still shows
// they were there.
func (msg *message) addParts(parts []jsonPart) {
	var texts, reasoning []string
	for _, p := range parts {
		switch p.Type {
		case "text":
			texts = append(texts, jsontext.RawText(p.Content))
		case "reasoning", "thinking":
			reasoning = append(reasoning, jsontext.RawText(p.Content))
		case "tool_call":
			msg.Calls = append(msg.Calls, toolCall{ID: p.ID, Name: p.Name, Args: jsontext.RawText(p.Arguments)})
		case "tool_call_response":
			msg.Results = append(msg.Results, toolResult{ID: p.ID, Text: jsontext.RawText(p.Response)})
		default:
			texts = append(texts, "["+p.Type+"]")
		}
	}
	msg.Text, msg.Reasoning = jsontext.JoinNonEmpty(texts...), jsontext.JoinNonEmpty(reasoning...)
}

// instructionsText reads gen_ai.system_instructions: a list of parts, or
// plain text.
func instructionsText(raw string) string {
	var parts []jsonPart
	if json.Unmarshal([]byte(raw), &parts) != nil {
		return jsontext.RawText(json.RawMessage(raw))
	}
	var msg message
	msg.addParts(parts)
	return msg.Text
}

// indexedMessages reads messages flattened into attributes by index:
// prefix + "N." + inner + "role" / "content" / "tool_calls.M..." (the older
// GenAI conventions and OpenLLMetry with inner ""; OpenInference with inner
// "message.").
func indexedMessages(a map[string]string, prefix, inner, role string) []message {
	var out []message
	for _, fields := range indexed(a, prefix) {
		get := func(k string) string { return fields[inner+k] }
		msg := message{Role: normalizeRole(get("role"), role), Text: get("content")}
		if msg.Text == "" {
			var texts []string
			for _, part := range indexed(fields, inner+"contents.") {
				texts = append(texts, part["message_content.text"])
			}
			msg.Text = jsontext.JoinNonEmpty(texts...)
		}
		for _, c := range indexed(fields, inner+"tool_calls.") {
			call := toolCall{ID: jsontext.FirstNonEmpty(c["id"], c["tool_call.id"]), Name: jsontext.FirstNonEmpty(c["name"], c["tool_call.function.name"]),
				Args: jsontext.FirstNonEmpty(c["arguments"], c["tool_call.function.arguments"])}
			msg.Calls = append(msg.Calls, call)
		}
		if id := get("tool_call_id"); id != "" && msg.Role == trace.RoleTool {
			msg.Results = append(msg.Results, toolResult{ID: id, Text: msg.Text})
			msg.Text = ""
		}
		out = append(out, msg)
	}
	return out
}

// indexed groups the keys prefix + "N." + rest by N, in index order, each
// group mapping rest to the value.
func indexed(a map[string]string, prefix string) []map[string]string {
	groups := map[int]map[string]string{}
	for k, v := range a {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		num, field, ok := strings.Cut(rest, ".")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n < 0 {
			continue
		}
		if groups[n] == nil {
			groups[n] = map[string]string{}
		}
		groups[n][field] = v
	}
	keys := make([]int, 0, len(groups))
	for n := range groups {
		keys = append(keys, n)
	}
	sort.Ints(keys)
	out := make([]map[string]string, len(keys))
	for i, n := range keys {
		out[i] = groups[n]
	}
	return out
}
