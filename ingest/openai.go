package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/faultline/faultline/ingest/internal/jsontext"
	"github.com/faultline/faultline/trace"
)

// OpenAIChat decodes plain chat transcripts in OpenAI's chat completions
// message format (see chat.Message): a JSON array of messages or one message
// a line, which make one conversation per file; and conversations of their
// own, as objects {"messages": [...]} (the request and fine-tuning shape,
// with model and id beside; tools and settings are not kept), in an array
// or one a line, or as lists of messages in an array.
type OpenAIChat struct{}

// Name implements Format.
func (OpenAIChat) Name() string { return "openai-chat" }

// openAIRoles are the roles of OpenAI's messages. A list of messages whose
// roles are others is some framework's own log.
var openAIRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true, "function": true}

// Sniff accepts messages with OpenAI's roles, loose, in {"messages"}
// objects, or in lists.
func (OpenAIChat) Sniff(head []byte) bool {
	keys := headKeys(head, 0)
	switch {
	case hasAny(keys, "role"):
		return openAIRoles[keys["role"]] && hasAny(keys, "content", "tool_calls")
	case hasAny(keys, "messages"):
		return openAIRoles[headKeys(head, 2)["role"]]
	case FirstByte(head) == '[':
		return openAIRoles[headKeys(head, 1)["role"]]
	}
	return false
}

// openAIConversation is a {"messages"} object, or a loose message when it
// has a role instead.
type openAIConversation struct {
	Messages json.RawMessage `json:"messages"`
	Role     json.RawMessage `json:"role"`
	Model    string          `json:"model"`
	ID       json.RawMessage `json:"id"`
}

// Decode implements Format.
func (OpenAIChat) Decode(ctx context.Context, in *Input, emit func(*trace.Trace) error) error {
	emit = in.limited(emit)
	ids := uniqueIDs{}
	// Loose messages make one conversation, emitted when the file ends. It
	// names no id, so it is named by a hash of its messages.
	var loose *chatLog
	var first *record
	looseHash := newRunHash()
	n := 0
	err := eachRecord(ctx, in, func(raw json.RawMessage, r *record) error {
		if FirstByte(raw) == '[' {
			return emit(openAITrace(raw, 0, "", "", r, ids))
		}
		var conv openAIConversation
		if err := decodeObject(raw, &conv); err != nil {
			r.skip(raw, err)
			return nil
		}
		if len(conv.Messages) > 0 {
			id, _ := jsontext.TextOf(conv.ID)
			return emit(openAITrace(conv.Messages, fieldLines(raw)["messages"], conv.Model, id, r, ids))
		}
		if len(conv.Role) == 0 {
			r.report(r.line, Error, "neither a message (no role) nor a conversation (no messages); record skipped")
			return nil
		}
		if loose == nil {
			first = r
			loose = &chatLog{t: &trace.Trace{Format: "openai-chat", Source: in.Path}, r: r}
		}
		looseHash.add(raw)
		loose.r = r
		loose.message(raw, 0, n)
		n++
		return nil
	})
	if err != nil || loose == nil {
		return err
	}
	t := loose.t
	t.ID = ids.of(looseHash.id("chat:"), first.n)
	t.Task = firstUserText(t)
	finishTrace(t, first)
	return emit(t)
}

// openAITrace makes one conversation's trace from its list of messages,
// which starts lines into the record.
func openAITrace(messages json.RawMessage, lines int, model, id string, r *record, ids uniqueIDs) *trace.Trace {
	t := &trace.Trace{Format: "openai-chat", Source: fmt.Sprintf("%s#%d", r.in.Path, r.n), Model: model}
	c := &chatLog{t: t, r: r}
	c.messages(messages, lines, "messages")
	if id == "" {
		id = shortHash(string(messages))
	}
	t.ID = ids.of("chat:"+id, r.n)
	t.Task = firstUserText(t)
	finishTrace(t, r)
	return t
}

// ChatSteps maps a JSON array of chat completions messages to steps, as
// OpenAIChat reads them, for a caller that sees a conversation message by
// message (the guard's proxy) rather than as a file. The last assistant
// message is not marked final and calls are not paired: a conversation in
// progress has not ended, and its reader pairs calls as results arrive. A
// message that cannot be read is an error, not skipped.
func ChatSteps(messages json.RawMessage) ([]trace.Step, error) {
	var problems []string
	in := &Input{Path: "messages", report: func(i Issue) {
		if i.Severity == Error {
			problems = append(problems, i.Message)
		}
	}}
	c := &chatLog{t: &trace.Trace{}, r: &record{in: in}}
	c.messages(messages, 0, "messages")
	if len(problems) > 0 {
		return nil, fmt.Errorf("chat messages: %s", strings.Join(problems, "; "))
	}
	return c.t.Steps, nil
}
