package otel

import (
	"strings"

	"github.com/faultline/faultline/trace"
)

// prompt is the input of an agent's latest LLM span whose
// gen_ai.input.messages was a JSON list that decoded to messages. Each LLM
// span carries the whole conversation so far, so the next span's list
// mostly starts with this one's elements, byte for byte: those were already
// given to input and can give no step again, so only the elements after them
// are decoded. Decoding the repeated history of every span was most of the
// mapping's cost on long conversations.
type prompt struct {
	instructions string // the span's gen_ai.system_instructions
	list         string // its gen_ai.input.messages, trimmed: "[" ... "]"
	// occ is what input counted over the span's messages, from which it goes
	// on counting over the elements that follow.
	occ map[string]int
}

// promptInput emits the input of an LLM span whose gen_ai.input.messages
// (raw, and trimmed: list) is a JSON list, as llmStart does for any input,
// decoding only what follows the list of the agent's previous prompt when
// it starts the same.
//
// Skipping those elements gives the same steps as reading them: input
// counted their keys before, and the trace holds at least as many of each
// key as were counted (seen only grows), so none of them would be fresh;
// counting then goes on from the counts they gave. The whole list decodes
// without error exactly when the elements that follow do (when there are
// any: see continuation), since the elements before decoded and a JSON
// array's elements decode independently.
func (m *mapper) promptInput(s *Span, agent, sys, raw, list string) {
	if p := m.prompts[agent]; p != nil && p.instructions == sys {
		if rest, ok := continuation(p.list, list); ok {
			if msgs, err := parseJSONMessages(rest, trace.RoleUser); err == nil {
				m.input(s, agent, s.Start, msgs, p.occ)
				p.list = list
				return
			}
			// The whole list fails too: read it below, for its note.
		}
	}
	msgs, ok := m.decodeMessages(s, "gen_ai.input.messages", raw, trace.RoleUser)
	occ := map[string]int{}
	m.input(s, agent, s.Start, withInstructions(sys, msgs), occ)
	if ok && len(msgs) > 0 {
		m.prompts[agent] = &prompt{instructions: sys, list: list, occ: occ}
	}
}

// jsonSpace is the whitespace JSON allows between tokens.
const jsonSpace = " \t\r\n"

// continuation returns the elements of the JSON list cur that follow those
// of prev, a non-empty JSON list, as a JSON list, when cur starts with
// prev's elements byte for byte.
func continuation(prev, cur string) (string, bool) {
	head := prev[:len(prev)-1] // prev without its closing bracket
	rest, ok := strings.CutPrefix(cur, head)
	if !ok {
		return "", false
	}
	rest = strings.TrimLeft(rest, jsonSpace)
	if rest == "]" {
		return "[]", true
	}
	// A comma: prev's last element ends in cur where it ended in prev, and
	// more elements follow. A comma before the end is no list ("[1, ]"),
	// while "[" and the end is: read whole, for its note.
	next, ok := strings.CutPrefix(rest, ",")
	if !ok || strings.HasPrefix(strings.TrimLeft(next, jsonSpace), "]") {
		return "", false
	}
	return "[" + next, true
}
