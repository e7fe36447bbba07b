package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/faultline/faultline/ingest/internal/chat"
	"github.com/faultline/faultline/ingest/internal/jsontext"
	"github.com/faultline/faultline/trace"
)

// ATIF decodes the Agent Trajectory Interchange Format (Harbor's RFC 0001,
// written by OpenHands, Terminus, mini-swe-agent and others): a trajectory
// {schema_version: "ATIF-v1.x", session_id, agent: {name, version,
// model_name}, steps, notes, final_metrics, extra}, each step {step_id,
// timestamp, source: system|user|agent, model_name, message,
// reasoning_content, tool_calls: [{tool_call_id, function_name,
// arguments}], observation: {results: [{source_call_id, content,
// subagent_trajectory_ref}]}, metrics: {prompt_tokens, completion_tokens,
// cached_tokens, cost_usd}}. Trajectories embedded as
// subagent_trajectories (v1.7) become traces of their own.
type ATIF struct{}

// Name implements Format.
func (ATIF) Name() string { return "atif" }

// Sniff accepts an object with an ATIF schema version, or the three fields
// every version requires.
func (ATIF) Sniff(head []byte) bool {
	keys := headKeys(head, 0)
	if v, ok := keys["schema_version"]; ok && strings.HasPrefix(v, "ATIF") {
		return true
	}
	return hasAny(keys, "session_id") && hasAny(keys, "agent") && hasAny(keys, "steps")
}

type atifTrajectory struct {
	SchemaVersion string `json:"schema_version"`
	SessionID     string `json:"session_id"`
	TrajectoryID  string `json:"trajectory_id"`
	Agent         struct {
		Name      string `json:"name"`
		Version   string `json:"version"`
		ModelName string `json:"model_name"`
	} `json:"agent"`
	Steps        json.RawMessage `json:"steps"`
	Notes        string          `json:"notes"`
	FinalMetrics struct {
		PromptTokens     int     `json:"total_prompt_tokens"`
		CompletionTokens int     `json:"total_completion_tokens"`
		CachedTokens     int     `json:"total_cached_tokens"`
		CostUSD          float64 `json:"total_cost_usd"`
	} `json:"final_metrics"`
	ContinuedTrajectoryRef string          `json:"continued_trajectory_ref"`
	Subagents              json.RawMessage `json:"subagent_trajectories"`
}

type atifStep struct {
	Timestamp        string          `json:"timestamp"`
	Source           string          `json:"source"`
	ModelName        string          `json:"model_name"`
	Message          json.RawMessage `json:"message"` // text, or content parts from v1.6
	ReasoningContent string          `json:"reasoning_content"`
	ToolCalls        []struct {
		ID        string          `json:"tool_call_id"`
		Name      string          `json:"function_name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"tool_calls"`
	Observation struct {
		Results []struct {
			SourceCallID string          `json:"source_call_id"`
			Content      json.RawMessage `json:"content"`
			Subagents    []struct {
				SessionID string `json:"session_id"`
				Path      string `json:"trajectory_path"`
			} `json:"subagent_trajectory_ref"`
		} `json:"results"`
	} `json:"observation"`
	Metrics struct {
		CompletionTokens int `json:"completion_tokens"`
	} `json:"metrics"`
}

// Decode implements Format.
func (ATIF) Decode(ctx context.Context, in *Input, emit func(*trace.Trace) error) error {
	emit = in.limited(emit)
	ids := uniqueIDs{}
	return eachRecord(ctx, in, func(raw json.RawMessage, r *record) error {
		return atifTrajectories(raw, 0, "", r, ids, emit)
	})
}

// atifTrajectories emits the trajectory that starts lines into the record,
// then the subagent trajectories it embeds, each naming its parent.
func atifTrajectories(raw json.RawMessage, lines int, parent string, r *record, ids uniqueIDs, emit func(*trace.Trace) error) error {
	var tj atifTrajectory
	fieldLines, err := decodeRecord(raw, &tj)
	if err != nil {
		r.skipPart(lines, raw, err, "", "trajectory")
		return nil
	}
	t := &trace.Trace{Format: "atif", Source: fmt.Sprintf("%s#%d", r.in.Path, r.n), System: tj.Agent.Name, Model: tj.Agent.ModelName}
	t.SetMeta("schema_version", tj.SchemaVersion)
	t.SetMeta("agent_version", tj.Agent.Version)
	t.SetMeta("trajectory_id", tj.TrajectoryID)
	t.SetMeta("notes", tj.Notes)
	t.SetMeta("continued_trajectory_ref", tj.ContinuedTrajectoryRef)
	t.SetMeta("parent_session", parent)
	m := &tj.FinalMetrics
	t.Usage = trace.Usage{InputTokens: m.PromptTokens, CachedInputTokens: m.CachedTokens, OutputTokens: m.CompletionTokens, TotalTokens: m.PromptTokens + m.CompletionTokens}
	if m.CostUSD > 0 {
		t.SetMeta("cost_usd", strconv.FormatFloat(m.CostUSD, 'f', -1, 64))
	}

	steps, err := jsonElements(tj.Steps)
	if err != nil {
		r.report(r.at(lines+fieldLines["steps"]), Error, `field "steps" %v; steps skipped`, err)
	}
	// A step's model overrides the agent's: the trace's model is the one
	// its first agent step used, and all of them are kept when they differ.
	var models []string
	for i, s := range steps {
		model := atifStepSteps(t, s.raw, r, lines+fieldLines["steps"]+s.lines, i, tj.Agent.ModelName)
		if model != "" && !containsString(models, model) {
			models = append(models, model)
		}
	}
	if len(models) > 0 {
		t.Model = models[0]
	}
	if len(models) > 1 {
		t.SetMeta("models", strings.Join(models, ","))
	}
	t.Task = firstUserText(t)
	id := tj.SessionID
	if id == "" {
		id = shortHash(string(raw))
	}
	t.ID = ids.of("atif:"+id, r.n)
	finishTrace(t, r)
	if err := emit(t); err != nil {
		return err
	}
	subs, err := jsonElements(tj.Subagents)
	if err != nil {
		r.report(r.at(lines+fieldLines["subagent_trajectories"]), Error, `field "subagent_trajectories" %v; ignored`, err)
	}
	for _, sub := range subs {
		if err := atifTrajectories(sub.raw, lines+fieldLines["subagent_trajectories"]+sub.lines, t.ID, r, ids, emit); err != nil {
			return err
		}
	}
	return nil
}

// atifStepSteps appends the steps of one ATIF step, which holds a whole
// agent turn: reasoning, message, tool calls and their observations. It
// returns the model of an agent step, the step's own or else the agent's
// default, and "" for other steps.
func atifStepSteps(t *trace.Trace, raw json.RawMessage, r *record, lines, i int, defaultModel string) string {
	var s atifStep
	if err := json.Unmarshal(raw, &s); err != nil {
		r.skipPart(lines, raw, err, fmt.Sprintf("step %d", i), "step")
		return ""
	}
	ts := parseTime(s.Timestamp)
	text, reasoning := chat.Parts(s.Message)
	model := ""
	switch s.Source {
	case "system":
		// The system prompt comes before the run; later system steps are
		// the harness's own events (context management, delegation).
		step := trace.Step{Kind: trace.KindSystem, Role: trace.RoleSystem, Text: text, Time: ts}
		if !atifStarted(t) {
			step.Type = "instructions"
		}
		t.Append(step)
	case "user":
		t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleUser, Text: text, Time: ts})
	default:
		if s.Source != "agent" {
			r.report(r.at(lines), Notice, "step %d: source %q is not system, user or agent; read as the agent's", i, s.Source)
		}
		model = jsontext.FirstNonEmpty(s.ModelName, defaultModel)
		first := len(t.Steps)
		if thought := jsontext.JoinNonEmpty(s.ReasoningContent, reasoning); thought != "" {
			t.Append(trace.Step{Kind: trace.KindReasoning, Role: trace.RoleAssistant, Text: thought, Time: ts})
		}
		if text != "" || len(s.ToolCalls) == 0 {
			t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant, Text: text, Time: ts})
		}
		for _, c := range s.ToolCalls {
			t.Append(trace.Step{Kind: trace.KindToolCall, Role: trace.RoleAssistant, Tool: c.Name, Args: jsontext.RawText(c.Arguments), CallID: c.ID, Time: ts})
		}
		if n := s.Metrics.CompletionTokens; n > 0 && len(t.Steps) > first {
			// The turn's output tokens belong to its last step, as Codex's do.
			t.Steps[len(t.Steps)-1].Tokens = n
		}
	}
	for _, res := range s.Observation.Results {
		content, _ := chat.Parts(res.Content)
		for _, sub := range res.Subagents {
			content = jsontext.JoinNonEmpty(content, "[subagent trajectory "+sub.SessionID+prefixed(" at ", sub.Path)+"]")
		}
		step := trace.Step{Kind: trace.KindToolResult, Role: trace.RoleTool, CallID: res.SourceCallID, Text: content, Time: ts}
		if s.Source == "system" {
			step.Kind, step.Role = trace.KindSystem, trace.RoleSystem
		}
		t.Append(step)
	}
	return model
}

// atifStarted reports whether a user or the agent has spoken yet.
func atifStarted(t *trace.Trace) bool {
	for _, s := range t.Steps {
		if s.Kind != trace.KindSystem {
			return true
		}
	}
	return false
}
