// Package trace defines faultline's single currency: a Trace (one run of an
// agent or multi-agent system) made of ordered Steps, plus the Findings that
// annotate it and the Outcomes that judge it. Every ingest format produces
// these types and every analysis consumes them.
package trace

import (
	"time"
)

// Kind says what a step is. The set is closed so detectors and renderers can
// switch on it exhaustively.
type Kind string

const (
	KindMessage    Kind = "message"     // a message from a user, agent or harness
	KindReasoning  Kind = "reasoning"   // the model's visible reasoning or plan
	KindToolCall   Kind = "tool_call"   // an invocation of a tool
	KindToolResult Kind = "tool_result" // what a tool returned
	KindFinal      Kind = "final"       // the agent's final answer
	KindSystem     Kind = "system"      // harness events, unknown event types kept verbatim
	KindError      Kind = "error"       // an aborted turn or other run-level error
)

// Kinds lists every Kind in a stable order.
var Kinds = []Kind{KindMessage, KindReasoning, KindToolCall, KindToolResult, KindFinal, KindSystem, KindError}

// Valid reports whether k is one of the declared kinds.
func (k Kind) Valid() bool {
	for _, known := range Kinds {
		if k == known {
			return true
		}
	}
	return false
}

// Roles used in Step.Role. Formats may use others (a framework's own agent
// roles); these are the ones the detectors rely on.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleHarness   = "harness" // messages injected by the harness, not typed by a person
	RoleTool      = "tool"
	RoleSystem    = "system"
)

// TypeRetryNudge marks a harness message that re-prompts the agent because
// its required output has not appeared (ITBench Zero's "I don't see
// agent_output.json ..."). Formats set it in Step.Type; detectors rely on it.
const TypeRetryNudge = "retry_nudge"

// TypeEmptyTurn marks a harness step recording that the model was given a
// turn and produced nothing before the run ended: the session stopped on
// the model's silence, not because the agent chose to stop. Formats that
// log turns (Codex's turn_context) add it; detectors rely on it.
const TypeEmptyTurn = "empty_turn"

// Step is one event of a run. Index is its position in Trace.Steps.
type Step struct {
	Index int    `json:"index"`
	Kind  Kind   `json:"kind"`
	Role  string `json:"role,omitempty"`  // user, assistant, harness, tool, system, developer
	Agent string `json:"agent,omitempty"` // the agent's name in multi-agent systems
	Text  string `json:"text,omitempty"`

	Tool   string `json:"tool,omitempty"`    // tool name, on calls and results
	Args   string `json:"args,omitempty"`    // call arguments as the agent wrote them
	CallID string `json:"call_id,omitempty"` // pairs a call with its result
	// Pair is the index of the matching call (on a result) or result (on a
	// call), set once by Link.
	Pair *int `json:"pair,omitempty"`
	// ExitCode is the process exit status of shell-like tools, when known.
	ExitCode *int `json:"exit_code,omitempty"`
	// IsError marks a result or step that reports a failure.
	IsError bool `json:"is_error,omitempty"`

	Time   time.Time `json:"time,omitzero"`
	Tokens int       `json:"tokens,omitempty"` // tokens attributed to this step, when the format says
	Type   string    `json:"type,omitempty"`   // the format's own event type, for system steps
	// SpanID is the OpenTelemetry span (hex) the step came from, kept so that
	// exports can point back at it.
	SpanID string `json:"span_id,omitempty"`
}

// ByAgent reports whether the agent (the model under study) produced
// the step: its messages, reasoning, tool calls and final answer. Users,
// harnesses, tools and system events are not the agent. Multi-agent formats
// name their agents in Agent or give them roles of their own; those count,
// even in the "user" seat of a role-play pair (ChatDev's CEO).
func ByAgent(s *Step) bool {
	switch s.Role {
	case RoleHarness, RoleTool, RoleSystem, "developer":
		return false
	case RoleUser:
		if s.Agent == "" {
			return false
		}
	}
	switch s.Kind {
	case KindReasoning, KindToolCall, KindFinal:
		return true
	case KindMessage:
		return s.Role != "" || s.Agent != ""
	}
	return false
}

// HasPair reports whether the step is linked to its call or result.
func (s *Step) HasPair() bool { return s.Pair != nil }

// Usage is the token accounting a format reports for a whole run.
type Usage struct {
	InputTokens       int `json:"input_tokens,omitempty"`
	CachedInputTokens int `json:"cached_input_tokens,omitempty"`
	OutputTokens      int `json:"output_tokens,omitempty"`
	ReasoningTokens   int `json:"reasoning_tokens,omitempty"`
	TotalTokens       int `json:"total_tokens,omitempty"`
}

// Trace is one run. ID is unique within a store.
type Trace struct {
	ID     string `json:"id"`
	Format string `json:"format"` // the ingest format that produced it
	Source string `json:"source"` // file it came from (with a record number when a file holds many)
	System string `json:"system,omitempty"`
	Model  string `json:"model,omitempty"`
	// Task is the task prompt or problem statement.
	Task     string `json:"task,omitempty"`
	Scenario string `json:"scenario,omitempty"`
	Trial    string `json:"trial,omitempty"`

	Started time.Time `json:"started,omitzero"`
	Ended   time.Time `json:"ended,omitzero"`
	Usage   Usage     `json:"usage,omitzero"`

	Steps []Step `json:"steps,omitempty"`

	// Diagnosis is the run's declared answer file when one was found
	// (for ITBench, agent_output.json), verbatim.
	Diagnosis *Diagnosis `json:"diagnosis,omitempty"`
	// Findings carries annotations that arrive with the trace itself, such as
	// the labels bundled in MAD records. Detector and judge findings are
	// stored separately.
	Findings []Finding `json:"findings,omitempty"`
	Outcomes []Outcome `json:"outcomes,omitempty"`
	// Meta holds format-specific facts worth keeping (cli version, benchmark
	// round, the harness's retry count).
	Meta map[string]string `json:"meta,omitempty"`
	// DetectedWith names the detector set whose findings the trace carries
	// (detect.Version), set where the detectors ran on it; "" when they did
	// not. It travels with the findings so that a store records which set
	// produced them, and findings of an older set are known to be stale.
	DetectedWith string `json:"-"`
}

// Diagnosis is an answer file attached to a trace.
type Diagnosis struct {
	Source string `json:"source"` // where it was read from: a path, or "trace step N"
	Body   string `json:"body"`   // the file's content, verbatim
}

// SetMeta records a format-specific fact, allocating the map on first use.
func (t *Trace) SetMeta(key, value string) {
	if value == "" {
		return
	}
	if t.Meta == nil {
		t.Meta = map[string]string{}
	}
	t.Meta[key] = value
}

// Append adds a step at the end, numbering it.
func (t *Trace) Append(s Step) *Step {
	s.Index = len(t.Steps)
	t.Steps = append(t.Steps, s)
	return &t.Steps[len(t.Steps)-1]
}

// Step returns the step at index i, or nil when i is out of range.
func (t *Trace) Step(i int) *Step {
	if i < 0 || i >= len(t.Steps) {
		return nil
	}
	return &t.Steps[i]
}

// Result returns the result paired with the call at index i, or nil.
func (t *Trace) Result(i int) *Step {
	s := t.Step(i)
	if s == nil || s.Kind != KindToolCall || s.Pair == nil {
		return nil
	}
	return t.Step(*s.Pair)
}

// CountKind returns how many steps have kind k.
func (t *Trace) CountKind(k Kind) int {
	n := 0
	for i := range t.Steps {
		if t.Steps[i].Kind == k {
			n++
		}
	}
	return n
}
