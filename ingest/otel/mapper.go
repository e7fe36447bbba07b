package otel

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/faultline/faultline/trace"
)

// mapper builds one trace from its spans.
type mapper struct {
	t *trace.Trace
	// seen counts what was already emitted, keyed by kind and content: a
	// message by its agent, role and text; a tool call or result by its call
	// id. LLM spans carry the whole conversation so far as their input; only
	// what is not in the trace yet becomes a step. Counts only grow, which
	// promptInput relies on to skip what an earlier span's input gave.
	seen map[string]int
	// pending holds, per tool name, the ids of calls still awaiting their
	// result, so a tool span that carries no call id finds the call it
	// answers.
	pending map[string][]string
	// prompts holds, per agent, the input of its latest LLM span given as a
	// JSON list (see prompt).
	prompts map[string]*prompt
	models  []string
	vocab   []string
	notes   []string
}

func (m *mapper) span(s *Span, agent string, children func(agent string)) {
	switch kindOf(s) {
	case kindAgent:
		agent = agentName(s)
		m.agentStart(s, agent)
		children(agent)
		m.agentEnd(s, agent)
	case kindLLM:
		m.llmStart(s, agent)
		children(agent)
		m.llmEnd(s, agent)
	case kindTool:
		id := m.toolStart(s, agent)
		children(agent)
		m.toolEnd(s, agent, id)
	default:
		children(agent)
		m.failure(s, agent)
	}
}

func (m *mapper) add(s *Span, agent string, at time.Time, st trace.Step) *trace.Step {
	st.SpanID = s.SpanID.String()
	st.Agent = agent
	st.Time = at
	return m.t.Append(st)
}

func (m *mapper) uses(vocab string) {
	if !slices.Contains(m.vocab, vocab) {
		m.vocab = append(m.vocab, vocab)
	}
}

func agentName(s *Span) string {
	for _, k := range []string{"gen_ai.agent.name", "agent.name", "traceloop.entity.name"} {
		if v := s.Attrs[k]; v != "" {
			return v
		}
	}
	if name, ok := strings.CutPrefix(s.Name, "invoke_agent "); ok {
		return name
	}
	return s.Name
}

// agentStart emits what an agent was asked: its input messages, or its
// input value as a user message (a handoff from another agent, or the task).
func (m *mapper) agentStart(s *Span, agent string) {
	msgs := m.inputMessages(s)
	if in := firstAttr(s, "input.value", "traceloop.entity.input"); len(msgs) == 0 && in != "" {
		msgs = []message{{Role: trace.RoleUser, Text: in}}
	}
	m.input(s, agent, s.Start, msgs, map[string]int{})
}

// agentEnd emits an agent's answer, which mostly repeats its last LLM
// output and is then already in the trace.
func (m *mapper) agentEnd(s *Span, agent string) {
	msgs := m.outputMessages(s)
	if out := firstAttr(s, "output.value", "traceloop.entity.output"); len(msgs) == 0 && out != "" {
		msgs = []message{{Role: trace.RoleAssistant, Text: out}}
	}
	m.input(s, agent, s.End, msgs, map[string]int{})
	m.failure(s, agent)
}

func (m *mapper) llmStart(s *Span, agent string) {
	sys := s.Attrs["gen_ai.system_instructions"]
	raw := s.Attrs["gen_ai.input.messages"]
	if list := strings.TrimSpace(raw); strings.HasPrefix(list, "[") {
		m.promptInput(s, agent, sys, raw, list)
		return
	}
	m.input(s, agent, s.Start, withInstructions(sys, m.inputMessages(s)), map[string]int{})
}

// withInstructions puts gen_ai.system_instructions, when given, before the
// input messages, as what the model was told first.
func withInstructions(sys string, msgs []message) []message {
	if sys == "" {
		return msgs
	}
	return append([]message{{Role: trace.RoleSystem, Text: instructionsText(sys)}}, msgs...)
}

func (m *mapper) llmEnd(s *Span, agent string) {
	a := s.Attrs
	if model := firstAttr(s, "gen_ai.response.model", "gen_ai.request.model", "llm.model_name"); model != "" && !slices.ContainsFunc(m.models, func(seen string) bool {
		// A span without a response model names the model requested, of which
		// the response names a dated version: the same model.
		return strings.HasPrefix(seen, model) || strings.HasPrefix(model, seen)
	}) {
		m.models = append(m.models, model)
	}
	if p := firstAttr(s, "gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system"); p != "" {
		m.t.SetMeta("gen_ai.provider", p)
	}
	u := &m.t.Usage
	in := attrInt(a, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")
	out := attrInt(a, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion")
	u.InputTokens += in
	u.OutputTokens += out
	u.CachedInputTokens += attrInt(a, "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens", "llm.token_count.prompt_details.cache_read")
	u.ReasoningTokens += attrInt(a, "gen_ai.usage.reasoning.output_tokens", "llm.token_count.completion_details.reasoning")
	total := attrInt(a, "llm.token_count.total", "llm.usage.total_tokens")
	if total == 0 {
		total = in + out
	}
	u.TotalTokens += total
	m.output(s, agent, m.outputMessages(s), out)
	m.failure(s, agent)
}

// toolStart emits the call a tool span makes, unless the LLM's output already
// did, and returns the call id its result will carry.
func (m *mapper) toolStart(s *Span, agent string) string {
	name := firstAttr(s, "gen_ai.tool.name", "tool.name", "traceloop.entity.name")
	if name == "" {
		name = strings.TrimPrefix(s.Name, "execute_tool ")
	}
	id := firstAttr(s, "gen_ai.tool.call.id", "tool_call.id", "tool.id")
	if id == "" {
		if ids := m.pending[name]; len(ids) > 0 {
			return ids[0] // the span runs a call an LLM asked for
		}
		id = "span:" + s.SpanID.String()
	}
	if m.seen["call\x00"+id] == 0 {
		m.seen["call\x00"+id]++
		// OpenInference's tool.parameters is the tool's schema, not the call's
		// arguments: the last resort.
		args := firstAttr(s, "gen_ai.tool.call.arguments", "input.value", "traceloop.entity.input", "tool.parameters")
		m.call(s, agent, s.Start, toolCall{ID: id, Name: name, Args: args})
	}
	return id
}

func (m *mapper) toolEnd(s *Span, agent, id string) {
	text := firstAttr(s, "gen_ai.tool.call.result", "output.value", "traceloop.entity.output")
	if s.Failed && text == "" {
		text = m.errorText(s)
	}
	m.result(s, agent, s.End, toolResult{ID: id, Text: text, Failed: s.Failed})
}

// failure records a span that ended in error as an error step.
func (m *mapper) failure(s *Span, agent string) {
	if !s.Failed {
		return
	}
	m.add(s, agent, s.End, trace.Step{Kind: trace.KindError, Role: trace.RoleHarness, Type: "span_error",
		Text: s.Name + " failed: " + m.errorText(s), IsError: true})
}

// errorText is what a failed span says about its failure: the status
// message, the exception events, the error type.
func (m *mapper) errorText(s *Span) string {
	var parts []string
	if s.Status != "" {
		parts = append(parts, s.Status)
	}
	for _, e := range s.Events {
		if e.Name != "exception" {
			continue
		}
		msg := strings.TrimSpace(e.Attrs["exception.type"] + ": " + e.Attrs["exception.message"])
		if msg != ":" && !slices.Contains(parts, msg) {
			parts = append(parts, strings.TrimPrefix(msg, ": "))
		}
	}
	if len(parts) == 0 && s.Attrs["error.type"] != "" {
		parts = append(parts, s.Attrs["error.type"])
	}
	if len(parts) == 0 {
		return "status ERROR"
	}
	return strings.Join(parts, "; ")
}

// input emits the messages a span was given that the trace does not have
// yet: counting occurrences, so a message really sent twice is kept twice.
// occ holds the occurrences counted over the span's messages before msgs
// (see prompt) and is updated.
func (m *mapper) input(s *Span, agent string, at time.Time, msgs []message, occ map[string]int) {
	fresh := func(key string) bool {
		occ[key]++
		if occ[key] <= m.seen[key] {
			return false
		}
		m.seen[key]++
		return true
	}
	for _, msg := range msgs {
		if msg.Reasoning != "" && fresh(msgKey(agent, "reasoning", msg.Reasoning)) {
			m.add(s, agent, at, trace.Step{Kind: trace.KindReasoning, Role: trace.RoleAssistant, Text: msg.Reasoning})
		}
		if msg.Text != "" && fresh(msgKey(agent, msg.Role, msg.Text)) {
			m.message(s, agent, at, msg.Role, msg.Text)
		}
		for _, c := range msg.Calls {
			if fresh("call\x00" + c.key(agent)) {
				m.call(s, agent, at, c)
			}
		}
		for _, r := range msg.Results {
			if fresh("result\x00" + r.key()) {
				m.result(s, agent, at, r)
			}
		}
	}
}

// output emits what an LLM produced; tokens go to its last step.
func (m *mapper) output(s *Span, agent string, msgs []message, tokens int) {
	before := len(m.t.Steps)
	for _, msg := range msgs {
		if msg.Reasoning != "" {
			m.seen[msgKey(agent, "reasoning", msg.Reasoning)]++
			m.add(s, agent, s.End, trace.Step{Kind: trace.KindReasoning, Role: trace.RoleAssistant, Text: msg.Reasoning})
		}
		if msg.Text != "" {
			m.seen[msgKey(agent, msg.Role, msg.Text)]++
			m.message(s, agent, s.End, msg.Role, msg.Text)
		}
		for _, c := range msg.Calls {
			m.seen["call\x00"+c.key(agent)]++
			m.call(s, agent, s.End, c)
		}
	}
	if tokens > 0 && len(m.t.Steps) > before {
		m.t.Steps[len(m.t.Steps)-1].Tokens = tokens
	}
}

func msgKey(agent, role, text string) string {
	return "msg\x00" + agent + "\x00" + role + "\x00" + text
}

func (m *mapper) message(s *Span, agent string, at time.Time, role, text string) {
	m.add(s, agent, at, trace.Step{Kind: trace.KindMessage, Role: role, Text: text})
}

// call emits a tool call; one without an id gets one, so that its result,
// from a tool span, can pair with it.
func (m *mapper) call(s *Span, agent string, at time.Time, c toolCall) {
	if c.ID == "" {
		c.ID = fmt.Sprintf("span:%s:%d", s.SpanID, len(m.t.Steps))
	}
	m.pending[c.Name] = append(m.pending[c.Name], c.ID)
	m.add(s, agent, at, trace.Step{Kind: trace.KindToolCall, Role: trace.RoleAssistant, Tool: c.Name, Args: c.Args, CallID: c.ID})
}

func (m *mapper) result(s *Span, agent string, at time.Time, r toolResult) {
	m.seen["result\x00"+r.key()]++
	tool := ""
	for name, ids := range m.pending {
		if i := slices.Index(ids, r.ID); i >= 0 {
			tool = name
			m.pending[name] = slices.Delete(ids, i, i+1)
			break
		}
	}
	m.add(s, agent, at, trace.Step{Kind: trace.KindToolResult, Role: trace.RoleTool, Tool: tool, CallID: r.ID, Text: r.Text, IsError: r.Failed})
}
