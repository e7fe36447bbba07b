package chat

import (
	"github.com/faultline/faultline/internal/jsonscan"
)

// MessageFields are the JSON names of a Message's fields, for a type that
// embeds Message to build its own list from (see jsonscan.Scanner.Other).
var MessageFields = jsonscan.FieldNames[Message]()

var toolCallFields = jsonscan.FieldNames[ToolCall]()

// ScanMember reads the value of the member key into m, for the scanner of
// a type that embeds Message. known reports whether key names one of
// Message's fields; when it does not, nothing was read. A field of
// Message's that the scanner does not read as encoding/json would (the
// legacy function_call, a list given twice, which encoding/json decodes
// into the first one's elements) is refused, and left to encoding/json.
func (m *Message) ScanMember(s *jsonscan.Scanner, key []byte) (ok, known bool) {
	switch string(key) {
	case "role":
		return s.StringInto(&m.Role), true
	case "name":
		return s.StringInto(&m.Name), true
	case "content":
		return s.RawInto((*[]byte)(&m.Content)), true
	case "tool_calls":
		return m.ToolCalls == nil && scanToolCalls(s, &m.ToolCalls), true
	case "function_call":
		return false, true
	case "tool_call_id":
		return s.StringInto(&m.ToolCallID), true
	case "function":
		return s.RawInto((*[]byte)(&m.Function)), true
	case "error":
		return s.RawInto((*[]byte)(&m.Error)), true
	case "reasoning_content":
		return s.StringInto(&m.ReasoningContent), true
	case "reasoning":
		return s.RawInto((*[]byte)(&m.Reasoning)), true
	case "refusal":
		return s.StringInto(&m.Refusal), true
	}
	return false, false
}

// scanToolCalls reads a list of tool calls, or null, into an empty list.
func scanToolCalls(s *jsonscan.Scanner, calls *[]ToolCall) bool {
	return jsonscan.List(s, calls, func(c *ToolCall, key []byte) bool { return c.scanMember(s, key) })
}

func (c *ToolCall) scanMember(s *jsonscan.Scanner, key []byte) bool {
	switch string(key) {
	case "id":
		return s.StringInto(&c.ID)
	case "function":
		return s.RawInto((*[]byte)(&c.Function))
	case "name":
		return s.StringInto(&c.Name)
	case "arguments":
		return s.RawInto((*[]byte)(&c.Arguments))
	case "input":
		return s.StringInto(&c.Input)
	case "custom":
		return false // a pointer to a struct, rare: encoding/json's
	}
	return s.Other(key, toolCallFields)
}
