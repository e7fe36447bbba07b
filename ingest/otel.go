package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/faultline/faultline/trace"
)

// OTelStatusMetric names the outcome a failed root span gives a trace: the
// run's own report that it broke, not a grade of its answer.
const OTelStatusMetric = "otel_status"

// OpenTelemetry traces become faultline traces here, one per OTLP trace id,
// whether they come from a file (otlp_json.go, otlp_proto.go) or live from
// `faultline receive`. Three attribute vocabularies are read:
//
//   - the GenAI semantic conventions as they are now (gen_ai.operation.name,
//     gen_ai.input.messages / gen_ai.output.messages, gen_ai.tool.*,
//     gen_ai.agent.name) and as they were up to v1.36 and in OpenLLMetry
//     (gen_ai.system, gen_ai.prompt.N.* / gen_ai.completion.N.* attributes,
//     the gen_ai.content.prompt / gen_ai.content.completion span events,
//     traceloop.span.kind);
//   - OpenInference (openinference.span.kind, llm.input_messages.N.message.*,
//     tool.name, input.value / output.value), as Phoenix writes it.
//
// Spans become steps depth first, children ordered by start time: what a span
// was given (its input messages, a tool call) when it starts, then its
// children, then what it produced (output messages, a tool result, an error)
// when it ends.

// OTelSpan is a span reduced to what the mapping reads: ids, times, status,
// and the attributes and events of the vocabularies above. Every other
// attribute (HTTP, database, host) is dropped as the span is read, so a trace
// held open by the receiver costs only what will be mapped.
type OTelSpan struct {
	TraceID    pcommon.TraceID
	SpanID     pcommon.SpanID
	ParentID   pcommon.SpanID
	Name       string
	Start, End time.Time
	Failed     bool   // status code ERROR
	Status     string // the status message
	Service    string // the resource's service.name
	Attrs      map[string]string
	Events     []OTelEvent
}

// OTelEvent is a span event of the GenAI vocabularies or an exception.
type OTelEvent struct {
	Name  string
	Time  time.Time
	Attrs map[string]string
}

// Size estimates the memory a span holds, for the receiver's limits: its
// text, plus overheads (the struct, map buckets, string headers) measured by
// the receiver's BenchmarkOpenTraceMemory and rounded up.
func (s *OTelSpan) Size() int {
	n := 400 + len(s.Name) + len(s.Status) + len(s.Service)
	for k, v := range s.Attrs {
		n += 80 + len(k) + len(v)
	}
	for _, e := range s.Events {
		n += 120 + len(e.Name)
		for k, v := range e.Attrs {
			n += 80 + len(k) + len(v)
		}
	}
	return n
}

// otelKept are the attribute prefixes the mapping reads.
var otelKept = []string{"gen_ai.", "llm.", "tool.", "tool_call.", "input.", "output.", "openinference.",
	"traceloop.", "agent.", "session.", "error.", "exception."}

func keepOTelAttr(key string) bool {
	for _, p := range otelKept {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// OTelSpans flattens td into spans. A span without a trace or span id cannot
// be placed in a trace: it is reported through bad with its position and
// left out.
func OTelSpans(td ptrace.Traces, bad func(where string, err error)) []OTelSpan {
	var out []OTelSpan
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		service := ""
		if v, ok := rs.Resource().Attributes().Get("service.name"); ok {
			service = v.AsString()
		}
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				if sp.TraceID().IsEmpty() || sp.SpanID().IsEmpty() {
					bad(fmt.Sprintf("resourceSpans[%d].scopeSpans[%d].spans[%d]", i, j, k), fmt.Errorf("span %q has no trace id or span id", sp.Name()))
					continue
				}
				out = append(out, newOTelSpan(sp, service))
			}
		}
	}
	return out
}

func newOTelSpan(sp ptrace.Span, service string) OTelSpan {
	s := OTelSpan{
		TraceID: sp.TraceID(), SpanID: sp.SpanID(), ParentID: sp.ParentSpanID(),
		Name: sp.Name(), Start: otelTime(sp.StartTimestamp()), End: otelTime(sp.EndTimestamp()),
		Failed: sp.Status().Code() == ptrace.StatusCodeError, Status: sp.Status().Message(),
		Service: service, Attrs: map[string]string{},
	}
	for k, v := range sp.Attributes().All() {
		if keepOTelAttr(k) {
			s.Attrs[k] = v.AsString()
		}
	}
	events := sp.Events()
	for i := 0; i < events.Len(); i++ {
		e := events.At(i)
		if e.Name() != "exception" && !strings.HasPrefix(e.Name(), "gen_ai.") {
			continue
		}
		attrs := make(map[string]string, e.Attributes().Len())
		for k, v := range e.Attributes().All() {
			attrs[k] = v.AsString()
		}
		s.Events = append(s.Events, OTelEvent{Name: e.Name(), Time: otelTime(e.Timestamp()), Attrs: attrs})
	}
	return s
}

func otelTime(ts pcommon.Timestamp) time.Time {
	if ts == 0 {
		return time.Time{}
	}
	return ts.AsTime()
}

// otelCollector groups the spans of a file by trace id, remembering where
// each trace was first seen, since a trace's spans may be spread over many
// records (the collector's file exporter writes one batch per line).
type otelCollector struct {
	records int // records read, spans or not
	order   []pcommon.TraceID
	spans   map[pcommon.TraceID][]OTelSpan
	line    map[pcommon.TraceID]int
}

func newOTelCollector() *otelCollector {
	return &otelCollector{spans: map[pcommon.TraceID][]OTelSpan{}, line: map[pcommon.TraceID]int{}}
}

func (c *otelCollector) add(spans []OTelSpan, line int) {
	for _, s := range spans {
		if _, ok := c.spans[s.TraceID]; !ok {
			c.order = append(c.order, s.TraceID)
			c.line[s.TraceID] = line
		}
		c.spans[s.TraceID] = append(c.spans[s.TraceID], s)
	}
}

// emit maps and emits every trace, in the order they were first seen.
func (c *otelCollector) emit(in *Input, format string, emit func(*trace.Trace) error) error {
	for _, id := range c.order {
		t, notes := OTelTrace(c.spans[id], format, in.Path)
		delete(c.spans, id)
		for _, n := range notes {
			in.Report(c.line[id], Notice, "trace %s: %s", id, n)
		}
		if t == nil {
			continue
		}
		if err := emit(t); err != nil {
			return err
		}
	}
	return nil
}

// OTelTrace maps the spans of one OTLP trace to a faultline trace. It
// returns nil when no span is an LLM call, tool call or agent of the
// vocabularies read (a trace of some other service), and notes on what could
// not be placed.
func OTelTrace(spans []OTelSpan, format, source string) (*trace.Trace, []string) {
	if len(spans) == 0 {
		return nil, nil
	}
	id := spans[0].TraceID
	m := &otelMapper{
		t:    &trace.Trace{ID: id.String(), Format: format, Source: source},
		seen: map[string]int{}, pending: map[string][]string{},
	}
	m.t.SetMeta("otel.trace_id", id.String())
	tree := newOTelTree(spans, &m.notes)
	if !slices.ContainsFunc(tree.spans, func(s *OTelSpan) bool { return otelKindOf(s) != otelOther }) {
		return nil, append(m.notes, "no LLM, tool or agent spans (GenAI, OpenInference or OpenLLMetry); not stored")
	}
	tree.walk(m)
	m.finish(tree)
	return m.t, m.notes
}

// otelTree is a trace's spans as a tree, ready to be walked in order.
type otelTree struct {
	spans    []*OTelSpan
	children map[int][]int
	roots    []int
	visited  []bool
}

func newOTelTree(spans []OTelSpan, notes *[]string) *otelTree {
	tr := &otelTree{children: map[int][]int{}}
	byID := make(map[pcommon.SpanID]int, len(spans))
	dups := 0
	for i := range spans {
		if _, ok := byID[spans[i].SpanID]; ok {
			dups++ // an exporter's retry sent it again
			continue
		}
		byID[spans[i].SpanID] = len(tr.spans)
		tr.spans = append(tr.spans, &spans[i])
	}
	if dups > 0 {
		*notes = append(*notes, fmt.Sprintf("%d spans received more than once; kept once", dups))
	}
	orphans := 0
	for i, s := range tr.spans {
		p, ok := byID[s.ParentID]
		switch {
		case s.ParentID.IsEmpty():
			tr.roots = append(tr.roots, i)
		case ok && p != i:
			tr.children[p] = append(tr.children[p], i)
		default:
			orphans++
			tr.roots = append(tr.roots, i)
		}
	}
	if orphans > 0 {
		*notes = append(*notes, fmt.Sprintf("%d spans whose parent span is missing; placed at the top", orphans))
	}
	tr.sort(tr.roots)
	for _, c := range tr.children {
		tr.sort(c)
	}
	tr.visited = make([]bool, len(tr.spans))
	return tr
}

// sort orders spans by start, then end, then span id, so that the same spans
// always give the same steps.
func (tr *otelTree) sort(idx []int) {
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := tr.spans[idx[a]], tr.spans[idx[b]]
		if !x.Start.Equal(y.Start) {
			return x.Start.Before(y.Start)
		}
		if !x.End.Equal(y.End) {
			return x.End.Before(y.End)
		}
		return bytes.Compare(x.SpanID[:], y.SpanID[:]) < 0
	})
}

// walk visits every span once: the roots in order, then whatever a parent
// cycle kept out of reach of any root.
func (tr *otelTree) walk(m *otelMapper) {
	for _, r := range tr.roots {
		tr.visit(m, r, "")
	}
	rest := []int{}
	for i, v := range tr.visited {
		if !v {
			rest = append(rest, i)
		}
	}
	if len(rest) > 0 {
		m.notes = append(m.notes, fmt.Sprintf("%d spans in a parent cycle; placed at the top", len(rest)))
		tr.sort(rest)
		for _, i := range rest {
			tr.visit(m, i, "")
		}
	}
}

func (tr *otelTree) visit(m *otelMapper, i int, agent string) {
	if tr.visited[i] {
		return
	}
	tr.visited[i] = true
	m.span(tr.spans[i], agent, func(agent string) {
		for _, c := range tr.children[i] {
			tr.visit(m, c, agent)
		}
	})
}

// otelKind is what a span is to the mapping.
type otelKind int

const (
	otelOther otelKind = iota
	otelLLM
	otelTool
	otelAgent
)

func otelKindOf(s *OTelSpan) otelKind {
	a := s.Attrs
	switch a["gen_ai.operation.name"] {
	case "chat", "text_completion", "generate_content", "completion":
		return otelLLM
	case "execute_tool":
		return otelTool
	case "invoke_agent":
		return otelAgent
	case "":
	default:
		return otelOther // embeddings, create_agent, retrieval: no step of their own
	}
	switch strings.ToUpper(a["openinference.span.kind"]) {
	case "LLM":
		return otelLLM
	case "TOOL":
		return otelTool
	case "AGENT":
		return otelAgent
	}
	switch a["traceloop.span.kind"] {
	case "tool":
		return otelTool
	case "agent":
		return otelAgent
	}
	if a["gen_ai.tool.name"] != "" {
		return otelTool
	}
	// The older conventions name no operation: a span about a model is a call.
	if a["llm.request.type"] != "embedding" && (a["gen_ai.system"] != "" || a["gen_ai.provider.name"] != "" ||
		a["gen_ai.request.model"] != "" || hasPrefixKey(a, "gen_ai.prompt.") || hasPrefixKey(a, "gen_ai.completion.")) {
		return otelLLM
	}
	return otelOther
}

func hasPrefixKey(a map[string]string, prefix string) bool {
	for k := range a {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// otelMapper builds one trace from its spans.
type otelMapper struct {
	t *trace.Trace
	// seen counts what was already emitted, keyed by kind and content: a
	// message by its agent, role and text; a tool call or result by its call
	// id. LLM spans carry the whole conversation so far as their input; only
	// what is not in the trace yet becomes a step.
	seen map[string]int
	// pending holds, per tool name, the ids of calls still awaiting their
	// result, so a tool span that carries no call id finds the call it
	// answers.
	pending map[string][]string
	models  []string
	vocab   []string
	notes   []string
}

func (m *otelMapper) span(s *OTelSpan, agent string, children func(agent string)) {
	switch otelKindOf(s) {
	case otelAgent:
		agent = otelAgentName(s)
		m.agentStart(s, agent)
		children(agent)
		m.agentEnd(s, agent)
	case otelLLM:
		m.llmStart(s, agent)
		children(agent)
		m.llmEnd(s, agent)
	case otelTool:
		id := m.toolStart(s, agent)
		children(agent)
		m.toolEnd(s, agent, id)
	default:
		children(agent)
		m.failure(s, agent)
	}
}

func (m *otelMapper) add(s *OTelSpan, agent string, at time.Time, st trace.Step) *trace.Step {
	st.SpanID = s.SpanID.String()
	st.Agent = agent
	st.Time = at
	return m.t.Append(st)
}

func (m *otelMapper) uses(vocab string) {
	if !slices.Contains(m.vocab, vocab) {
		m.vocab = append(m.vocab, vocab)
	}
}

func otelAgentName(s *OTelSpan) string {
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
func (m *otelMapper) agentStart(s *OTelSpan, agent string) {
	msgs := m.inputMessages(s)
	if in := firstAttr(s, "input.value", "traceloop.entity.input"); len(msgs) == 0 && in != "" {
		msgs = []otelMessage{{Role: trace.RoleUser, Text: in}}
	}
	m.input(s, agent, s.Start, msgs)
}

// agentEnd emits an agent's answer, which mostly repeats its last LLM
// output and is then already in the trace.
func (m *otelMapper) agentEnd(s *OTelSpan, agent string) {
	msgs := m.outputMessages(s)
	if out := firstAttr(s, "output.value", "traceloop.entity.output"); len(msgs) == 0 && out != "" {
		msgs = []otelMessage{{Role: trace.RoleAssistant, Text: out}}
	}
	m.input(s, agent, s.End, msgs)
	m.failure(s, agent)
}

func (m *otelMapper) llmStart(s *OTelSpan, agent string) {
	var msgs []otelMessage
	if sys := s.Attrs["gen_ai.system_instructions"]; sys != "" {
		msgs = append(msgs, otelMessage{Role: trace.RoleSystem, Text: instructionsText(sys)})
	}
	msgs = append(msgs, m.inputMessages(s)...)
	m.input(s, agent, s.Start, msgs)
}

func (m *otelMapper) llmEnd(s *OTelSpan, agent string) {
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
func (m *otelMapper) toolStart(s *OTelSpan, agent string) string {
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
		m.call(s, agent, s.Start, otelCall{ID: id, Name: name, Args: args})
	}
	return id
}

func (m *otelMapper) toolEnd(s *OTelSpan, agent, id string) {
	text := firstAttr(s, "gen_ai.tool.call.result", "output.value", "traceloop.entity.output")
	if s.Failed && text == "" {
		text = m.errorText(s)
	}
	m.result(s, agent, s.End, otelResult{ID: id, Text: text, Failed: s.Failed})
}

// failure records a span that ended in error as an error step.
func (m *otelMapper) failure(s *OTelSpan, agent string) {
	if !s.Failed {
		return
	}
	m.add(s, agent, s.End, trace.Step{Kind: trace.KindError, Role: trace.RoleHarness, Type: "span_error",
		Text: s.Name + " failed: " + m.errorText(s), IsError: true})
}

// errorText is what a failed span says about its failure: the status
// message, the exception events, the error type.
func (m *otelMapper) errorText(s *OTelSpan) string {
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
func (m *otelMapper) input(s *OTelSpan, agent string, at time.Time, msgs []otelMessage) {
	occ := map[string]int{}
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
func (m *otelMapper) output(s *OTelSpan, agent string, msgs []otelMessage, tokens int) {
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

func msgKey(agent, role, text string) string {
	return "msg\x00" + agent + "\x00" + role + "\x00" + text
}

func (m *otelMapper) message(s *OTelSpan, agent string, at time.Time, role, text string) {
	m.add(s, agent, at, trace.Step{Kind: trace.KindMessage, Role: role, Text: text})
}

// call emits a tool call; one without an id gets one, so that its result,
// from a tool span, can pair with it.
func (m *otelMapper) call(s *OTelSpan, agent string, at time.Time, c otelCall) {
	if c.ID == "" {
		c.ID = fmt.Sprintf("span:%s:%d", s.SpanID, len(m.t.Steps))
	}
	m.pending[c.Name] = append(m.pending[c.Name], c.ID)
	m.add(s, agent, at, trace.Step{Kind: trace.KindToolCall, Role: trace.RoleAssistant, Tool: c.Name, Args: c.Args, CallID: c.ID})
}

func (m *otelMapper) result(s *OTelSpan, agent string, at time.Time, r otelResult) {
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

// finish fills in what is known only once every span was read.
func (m *otelMapper) finish(tr *otelTree) {
	t := m.t
	for _, s := range tr.spans {
		if !s.Start.IsZero() && (t.Started.IsZero() || s.Start.Before(t.Started)) {
			t.Started = s.Start
		}
		if s.End.After(t.Ended) {
			t.Ended = s.End
		}
		if s.Service != "" && t.System == "" && !strings.HasPrefix(s.Service, "unknown_service") {
			t.System = s.Service
		}
		if v := firstAttr(s, "gen_ai.conversation.id", "session.id"); v != "" {
			t.SetMeta("session_id", v)
		}
		switch {
		case s.Attrs["gen_ai.operation.name"] != "" || s.Attrs["gen_ai.input.messages"] != "" || s.Attrs["gen_ai.output.messages"] != "":
			m.uses("gen_ai")
		case s.Attrs["openinference.span.kind"] != "":
			m.uses("openinference")
		case otelKindOf(s) != otelOther:
			m.uses("gen_ai-legacy")
		}
	}
	if len(m.models) > 0 {
		t.Model = m.models[0]
		if len(m.models) > 1 {
			t.SetMeta("models", strings.Join(m.models, ","))
		}
	}
	sort.Strings(m.vocab)
	t.SetMeta("otel.conventions", strings.Join(m.vocab, ","))
	t.SetMeta("otel.spans", strconv.Itoa(len(tr.spans)))
	for i := range t.Steps {
		if s := &t.Steps[i]; s.Kind == trace.KindMessage && s.Role == trace.RoleUser {
			t.Task = s.Text
			break
		}
	}
	for _, r := range tr.roots {
		root := tr.spans[r]
		if !root.ParentID.IsEmpty() {
			continue
		}
		// Findings about the run as a whole point at its root span on export.
		t.SetMeta("otel.root_span_id", root.SpanID.String())
		if root.Failed {
			no := false
			t.Outcomes = append(t.Outcomes, trace.Outcome{Source: trace.FormatOutcomeSource, Metric: OTelStatusMetric, Success: &no, Detail: m.errorText(root)})
		}
		break
	}
	markFinal(t)
	for _, p := range t.Link() {
		m.notes = append(m.notes, p.String())
	}
}

func firstAttr(s *OTelSpan, keys ...string) string {
	for _, k := range keys {
		if v := s.Attrs[k]; v != "" {
			return v
		}
	}
	return ""
}

func attrInt(a map[string]string, keys ...string) int {
	for _, k := range keys {
		if v, err := strconv.ParseFloat(a[k], 64); err == nil && v > 0 && v < 1e12 {
			return int(v)
		}
	}
	return 0
}

// otelMessage is one chat message in whichever vocabulary it came.
type otelMessage struct {
	Role      string
	Text      string
	Reasoning string
	Calls     []otelCall
	Results   []otelResult
}

type otelCall struct{ ID, Name, Args string }

// key identifies a call: by its id, or by what it asks when it has none.
func (c otelCall) key(agent string) string {
	if c.ID != "" {
		return c.ID
	}
	return "\x00" + agent + "\x00" + c.Name + "\x00" + c.Args
}

type otelResult struct {
	ID, Text string
	Failed   bool
}

func (r otelResult) key() string {
	if r.ID != "" {
		return r.ID
	}
	return "\x00" + r.Text
}

// inputMessages reads the messages a span was given, from the first
// vocabulary that has them.
func (m *otelMapper) inputMessages(s *OTelSpan) []otelMessage {
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
func (m *otelMapper) outputMessages(s *OTelSpan) []otelMessage {
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
func (m *otelMapper) eventMessages(s *OTelSpan, event, attr, role string) []otelMessage {
	var out []otelMessage
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
func eventMessage(e OTelEvent, role string) otelMessage {
	msg := otelMessage{Role: normalizeRole(e.Attrs["role"], role)}
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
		msg.Results, msg.Text = []otelResult{{ID: id, Text: msg.Text}}, ""
	}
	if calls := e.Attrs["tool_calls"]; calls != "" {
		if parsed, err := parseJSONMessages(`[{"role":"assistant","tool_calls":`+calls+`}]`, role); err == nil && len(parsed) == 1 {
			msg.Calls = append(msg.Calls, parsed[0].Calls...)
		}
	}
	return msg
}

func (m *otelMapper) jsonMessages(s *OTelSpan, where, raw, role string) []otelMessage {
	msgs, err := parseJSONMessages(raw, role)
	if err != nil {
		m.notes = append(m.notes, fmt.Sprintf("span %s %q: %s is not a list of messages (%v); kept as text", s.SpanID, s.Name, where, err))
		return []otelMessage{{Role: role, Text: raw}}
	}
	return msgs
}

// jsonMessage is a chat message as JSON: the GenAI conventions' form
// (role, parts) or the OpenAI form that chat.go reads (role, content,
// tool_calls, tool_call_id), which older events and frameworks write.
type jsonMessage struct {
	chatMessage
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

func parseJSONMessages(raw, role string) ([]otelMessage, error) {
	var list []jsonMessage
	trimmed := strings.TrimSpace(raw)
	switch {
	case strings.HasPrefix(trimmed, "["):
		if err := json.Unmarshal([]byte(trimmed), &list); err != nil {
			return nil, err
		}
	case strings.HasPrefix(trimmed, "{"):
		var one jsonMessage
		if err := json.Unmarshal([]byte(trimmed), &one); err != nil {
			return nil, err
		}
		list = []jsonMessage{one}
	default:
		return []otelMessage{{Role: role, Text: raw}}, nil
	}
	out := make([]otelMessage, 0, len(list))
	for _, jm := range list {
		msg := otelMessage{Role: normalizeRole(jm.Role, role)}
		msg.addParts(jm.Parts)
		text, reasoning := chatParts(jm.Content)
		msg.Text = joinNonEmpty(msg.Text, text)
		msg.Reasoning = joinNonEmpty(msg.Reasoning, reasoning, jm.ReasoningContent)
		for _, c := range jm.ToolCalls {
			name, args := c.nameArgs()
			msg.Calls = append(msg.Calls, otelCall{ID: c.ID, Name: name, Args: args})
		}
		if msg.Role == trace.RoleTool && jm.ToolCallID != "" {
			msg.Results = append(msg.Results, otelResult{ID: jm.ToolCallID, Text: msg.Text})
			msg.Text = ""
		}
		out = append(out, msg)
	}
	return out, nil
}

// addParts reads the GenAI conventions' parts into msg. Parts that are not
// text (images, files) are named in brackets so the message still shows
// they were there.
func (msg *otelMessage) addParts(parts []jsonPart) {
	var texts, reasoning []string
	for _, p := range parts {
		switch p.Type {
		case "text":
			texts = append(texts, rawText(p.Content))
		case "reasoning", "thinking":
			reasoning = append(reasoning, rawText(p.Content))
		case "tool_call":
			msg.Calls = append(msg.Calls, otelCall{ID: p.ID, Name: p.Name, Args: rawText(p.Arguments)})
		case "tool_call_response":
			msg.Results = append(msg.Results, otelResult{ID: p.ID, Text: rawText(p.Response)})
		default:
			texts = append(texts, "["+p.Type+"]")
		}
	}
	msg.Text, msg.Reasoning = joinNonEmpty(texts...), joinNonEmpty(reasoning...)
}

// instructionsText reads gen_ai.system_instructions: a list of parts, or
// plain text.
func instructionsText(raw string) string {
	var parts []jsonPart
	if json.Unmarshal([]byte(raw), &parts) != nil {
		return rawText(json.RawMessage(raw))
	}
	var msg otelMessage
	msg.addParts(parts)
	return msg.Text
}

// indexedMessages reads messages flattened into attributes by index:
// prefix + "N." + inner + "role" / "content" / "tool_calls.M..." (the older
// GenAI conventions and OpenLLMetry with inner ""; OpenInference with inner
// "message.").
func indexedMessages(a map[string]string, prefix, inner, role string) []otelMessage {
	var out []otelMessage
	for _, fields := range indexed(a, prefix) {
		get := func(k string) string { return fields[inner+k] }
		msg := otelMessage{Role: normalizeRole(get("role"), role), Text: get("content")}
		if msg.Text == "" {
			var texts []string
			for _, part := range indexed(fields, inner+"contents.") {
				texts = append(texts, part["message_content.text"])
			}
			msg.Text = joinNonEmpty(texts...)
		}
		for _, c := range indexed(fields, inner+"tool_calls.") {
			call := otelCall{ID: firstNonEmpty(c["id"], c["tool_call.id"]), Name: firstNonEmpty(c["name"], c["tool_call.function.name"]),
				Args: firstNonEmpty(c["arguments"], c["tool_call.function.arguments"])}
			msg.Calls = append(msg.Calls, call)
		}
		if id := get("tool_call_id"); id != "" && msg.Role == trace.RoleTool {
			msg.Results = append(msg.Results, otelResult{ID: id, Text: msg.Text})
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
