package ingest

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/faultline/faultline/ingest/internal/jsontext"
	"github.com/faultline/faultline/trace"
)

// MagenticOne decodes Magentic-One's message logs as AgentRx and Who&When
// publish them: a JSON list of {content, role}, one run a file, where the
// role names the speaker and, for the orchestrator, what it is doing:
// "human", "Orchestrator (thought)", "Orchestrator (-> WebSurfer)",
// "Orchestrator (termination condition)", "WebSurfer", "Assistant". (The
// console log of a run, as MAD keeps it, is read by the MAD format.)
type MagenticOne struct{}

// Name implements Format.
func (MagenticOne) Name() string { return "magentic-one" }

// magenticOrchestrator finds the orchestrator speaking in a message list.
// Quotes inside JSON strings are escaped, so it cannot match inside a
// message's content.
var magenticOrchestrator = regexp.MustCompile(`"role"\s*:\s*"Orchestrator \(`)

// Sniff accepts a JSON list of {content, role} messages in which the
// orchestrator speaks: its roles are what tells this log from a plain chat.
func (MagenticOne) Sniff(head []byte) bool {
	if FirstByte(head) != '[' {
		return false
	}
	keys := headKeys(head, 0)
	return hasAny(keys, "role") && hasAny(keys, "content") && magenticOrchestrator.Match(head)
}

// Decode implements Format.
func (MagenticOne) Decode(ctx context.Context, in *Input, emit func(*trace.Trace) error) error {
	emit = in.limited(emit)
	t := &trace.Trace{Format: "magentic-one", Source: in.Path, System: "magentic-one"}
	// The log names no run, so its id is a hash of its messages: the same
	// run has the same id wherever its file lies.
	h := newRunHash()
	read := false
	err := eachRecord(ctx, in, func(raw json.RawMessage, r *record) error {
		read = true
		h.add(raw)
		var m struct {
			Content json.RawMessage `json:"content"`
			Role    json.RawMessage `json:"role"`
		}
		if err := decodeObject(raw, &m); err != nil {
			r.skip(raw, err)
			return nil
		}
		role, ok := jsontext.TextOf(m.Role)
		if !ok {
			r.report(r.line, Error, `field "role" should be text, found %s; message skipped`, JSONKind(m.Role))
			return nil
		}
		t.Append(magenticStep(role, chatContent(m.Content)))
		return nil
	})
	if err != nil || !read {
		return err
	}
	t.ID = h.id("magentic-one:")
	t.Task = firstUserText(t)
	if len(t.Steps) == 0 {
		in.Report(0, Notice, "no readable message; nothing stored")
		return nil
	}
	return emit(t)
}

var (
	// magenticRole splits "Orchestrator (-> WebSurfer)" into the speaker and
	// what it is doing.
	magenticRole = regexp.MustCompile(`^(.+?) \((.+)\)$`)
	// magenticFinal is the line with which the orchestrator gives the answer.
	magenticFinal = regexp.MustCompile(`(?m)^FINAL ANSWER:`)
)

// magenticStep maps one Magentic-One message to a step: the human's request,
// the orchestrator's thoughts (its ledger and speaker choices) as reasoning,
// its instructions to an agent as messages with the addressee kept in Type
// ("-> WebSurfer"), the agents' messages, and the termination message that
// states the answer as the final one.
func magenticStep(role, text string) trace.Step {
	if r := strings.ToLower(role); r == "human" || r == "user" {
		return trace.Step{Kind: trace.KindMessage, Role: trace.RoleUser, Text: text}
	}
	step := trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant, Agent: role, Text: text}
	if m := magenticRole.FindStringSubmatch(role); m != nil {
		step.Agent, step.Type = m[1], m[2]
	}
	switch {
	case step.Type == "thought":
		step.Kind = trace.KindReasoning
	case magenticFinal.MatchString(text):
		step.Kind = trace.KindFinal
	}
	return step
}
