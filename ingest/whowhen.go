package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/faultline/faultline/ingest/internal/jsontext"
	"github.com/faultline/faultline/trace"
)

// WhoWhen decodes the Who&When failure-attribution benchmark: one JSON
// object per failed multi-agent run, {question, question_ID, level,
// ground_truth, is_correct (is_corrected in the hand-crafted subset),
// history: [{content, role, name}], mistake_agent, mistake_step,
// mistake_reason, system_prompt}, where mistake_agent and mistake_step (an
// index into history) name the decisive error: the agent and the step that
// made the run fail. The algorithm-generated subset's histories are AG2
// group chats that name each speaker (and its system prompts, one per
// agent); the hand-crafted subset's are Magentic-One logs whose role is the
// speaker. A file may also hold an array of records, or one a line.
type WhoWhen struct{}

const (
	// WhoWhenSource is the annotation source of Who&When's labels.
	WhoWhenSource = "human:whowhen"
	// DecisiveError is the raw label of a finding that marks where a run
	// went irrecoverably wrong (Who&When's mistake step), whichever failure
	// mode it was: such a finding has no mode.
	DecisiveError = "decisive error"
	// MetaMistakeAgent is the trace meta key that names the agent a
	// decisive-error label blames.
	MetaMistakeAgent = "mistake_agent"
)

// Name implements Format.
func (WhoWhen) Name() string { return "whowhen" }

// Sniff accepts records with a history and Who&When's labels or outcome.
// The hand-crafted files begin with a history long enough to fill the
// head, so a record whose only key so far is a history of chat messages is
// taken too.
func (WhoWhen) Sniff(head []byte) bool {
	keys := headKeys(head, 0)
	if !hasAny(keys, "history") {
		return false
	}
	if hasAny(keys, "mistake_agent", "mistake_step", "mistake_reason", "is_correct", "is_corrected") {
		return true
	}
	messages := headKeys(head, 2)
	return len(keys) == 1 && hasAny(messages, "content") && hasAny(messages, "role")
}

// whoWhenRecord is one record. Every field stays raw: the dataset writes
// numbers as strings in some files and not in others, so each is read
// leniently and a field of the wrong kind costs only itself.
type whoWhenRecord struct {
	History       json.RawMessage `json:"history"`
	Question      json.RawMessage `json:"question"`
	QuestionID    json.RawMessage `json:"question_ID"`
	Level         json.RawMessage `json:"level"`
	GroundTruth   json.RawMessage `json:"ground_truth"`
	IsCorrect     json.RawMessage `json:"is_correct"`
	IsCorrected   json.RawMessage `json:"is_corrected"`
	MistakeAgent  json.RawMessage `json:"mistake_agent"`
	MistakeStep   json.RawMessage `json:"mistake_step"`
	MistakeReason json.RawMessage `json:"mistake_reason"`
	SystemPrompt  json.RawMessage `json:"system_prompt"`
}

// Decode implements Format.
func (WhoWhen) Decode(ctx context.Context, in *Input, emit func(*trace.Trace) error) error {
	emit = in.limited(emit)
	ids := uniqueIDs{}
	return eachRecord(ctx, in, func(raw json.RawMessage, r *record) error {
		if t := whoWhenTrace(raw, r, ids); t != nil {
			return emit(t)
		}
		return nil
	})
}

// whoWhenTrace turns a record into a trace, or reports why it cannot and
// returns nil.
func whoWhenTrace(raw json.RawMessage, r *record, ids uniqueIDs) *trace.Trace {
	var rec whoWhenRecord
	lines, err := decodeRecord(raw, &rec)
	if err != nil {
		r.skip(raw, err)
		return nil
	}
	field := func(name string, raw json.RawMessage) string {
		s, ok := jsontext.TextOf(raw)
		if !ok {
			r.report(r.at(lines[name]), Error, "field %q should be text, found %s; ignored", name, JSONKind(raw))
		}
		return strings.TrimSpace(s)
	}
	t := &trace.Trace{Format: "whowhen", Source: fmt.Sprintf("%s#%d", r.in.Path, r.n), Task: field("question", rec.Question)}
	questionID := field("question_ID", rec.QuestionID)
	t.SetMeta("question_ID", questionID)
	t.SetMeta("level", field("level", rec.Level))
	groundTruth := field("ground_truth", rec.GroundTruth)
	t.SetMeta("ground_truth", groundTruth)

	prompts, err := jsonFields(rec.SystemPrompt)
	if err != nil {
		r.report(r.at(lines["system_prompt"]), Error, `field "system_prompt" %v; ignored`, err)
	}
	for _, p := range prompts {
		text, ok := jsontext.TextOf(p.raw)
		if !ok {
			r.report(r.at(lines["system_prompt"]+p.lines), Error, "system prompt of %q should be text, found %s; ignored", p.key, JSONKind(p.raw))
			continue
		}
		t.Append(trace.Step{Kind: trace.KindSystem, Role: trace.RoleSystem, Agent: p.key, Type: "instructions", Text: text})
	}

	// Each history entry is one step, even one that cannot be read, so that
	// mistake_step keeps pointing at the step it names.
	offset := len(t.Steps)
	history, err := jsonElements(rec.History)
	if err != nil {
		r.report(r.at(lines["history"]), Error, `field "history" %v; record skipped`, err)
		return nil
	}
	if len(history) == 0 {
		r.report(r.line, Error, "the history is empty; record skipped")
		return nil
	}
	named := false
	for i, m := range history {
		var msg struct {
			Content json.RawMessage `json:"content"`
			Role    json.RawMessage `json:"role"`
			Name    json.RawMessage `json:"name"`
		}
		err := json.Unmarshal(m.raw, &msg)
		role, roleOK := jsontext.TextOf(msg.Role)
		name, nameOK := jsontext.TextOf(msg.Name)
		if FirstByte(m.raw) != '{' || err != nil || !roleOK || !nameOK {
			r.report(r.at(lines["history"]+m.lines), Error, "history %d should be a message {content, role, name}, found %s; kept as a system step", i, trace.Clip(jsontext.Compact(m.raw), 60))
			t.Append(trace.Step{Kind: trace.KindSystem, Type: "unreadable", Text: jsontext.Compact(m.raw)})
			continue
		}
		if name != "" {
			named = true
			t.Append(ag2Step(name, chatContent(msg.Content)))
		} else {
			t.Append(magenticStep(role, chatContent(msg.Content)))
		}
	}
	subset := "hand-crafted"
	t.System = "magentic-one"
	if named || len(prompts) > 0 {
		subset, t.System = "algorithm-generated", "ag2"
	}
	t.SetMeta("subset", subset)

	correct, correctField := rec.IsCorrect, "is_correct"
	if len(rec.IsCorrect) == 0 {
		correct, correctField = rec.IsCorrected, "is_corrected"
	}
	if len(correct) > 0 {
		if v, ok := boolOf(correct); ok {
			t.Outcomes = []trace.Outcome{{Source: trace.FormatOutcomeSource, Metric: "is_correct", Success: &v, Detail: prefixed("ground truth: ", groundTruth)}}
		} else {
			r.report(r.at(lines[correctField]), Error, "field %q should be true or false, found %s; no outcome", correctField, trace.Clip(string(correct), 40))
		}
	}

	label := whoWhenMistake{agent: field("mistake_agent", rec.MistakeAgent), step: field("mistake_step", rec.MistakeStep),
		reason: field("mistake_reason", rec.MistakeReason), line: r.at(lines["mistake_step"])}
	label.add(t, r, offset, len(history))
	id := "whowhen:" + subset + ":" + questionID
	if questionID == "" {
		id = "whowhen:" + subset + ":" + shortHash(string(raw))
	}
	t.ID = ids.of(id, r.n)
	return t
}

// whoWhenMistake is a record's decisive error as written: the agent, the
// step (an index into the history) and why, with the line of the step.
type whoWhenMistake struct {
	agent, step, reason string
	line                int
}

// add imports the decisive error as a located human label: a finding of no
// mode (Who&When does not say which failure it was) at the mistake step,
// which is history step offset steps into the trace, the agent named in its
// explanation and in the trace's meta. A step that is not one of the n in
// the history is reported and the label kept without it, for the agent
// alone.
func (m whoWhenMistake) add(t *trace.Trace, r *record, offset, n int) {
	if m.agent == "" && m.step == "" {
		return
	}
	t.SetMeta(MetaMistakeAgent, m.agent)
	t.SetMeta("mistake_step", m.step)
	f := trace.Finding{Source: WhoWhenSource, Verdict: trace.Present, RawLabel: DecisiveError, Explanation: m.reason}
	if m.agent != "" {
		f.Explanation = m.agent + ": " + m.reason
	}
	k, err := strconv.Atoi(m.step)
	switch {
	case m.step == "":
	case err != nil || k < 0 || k >= n:
		r.report(m.line, Error, "mistake_step %q is not a step of the history (0 to %d); the label keeps the agent alone", m.step, n-1)
	default:
		f.Steps = []int{offset + k}
		if s := t.Steps[offset+k]; m.agent != "" && !strings.EqualFold(s.Agent, m.agent) {
			r.report(m.line, Notice, "mistake_step %d is spoken by %q, mistake_agent is %q", k, jsontext.FirstNonEmpty(s.Agent, s.Role), m.agent)
		}
	}
	t.Findings = append(t.Findings, f)
}

// ag2Exit matches the report of AG2's code executor: "exitcode: 1
// (execution failed)\nCode output: ...".
var ag2Exit = regexp.MustCompile(`^exitcode: (-?\d+) \(execution \w+\)`)

// ag2Step maps one message of an AG2 group chat: the speaker's message, or
// the code executor's report as a tool result with its exit code. AG2 logs
// a role as the chat manager saw it, not the speaker's own, so the role is
// dropped (see madChatSteps).
func ag2Step(name, text string) trace.Step {
	if m := ag2Exit.FindStringSubmatch(text); m != nil {
		if code, err := strconv.Atoi(m[1]); err == nil {
			return trace.Step{Kind: trace.KindToolResult, Role: trace.RoleTool, Agent: name, Text: text, ExitCode: &code, IsError: code != 0, Type: "code_execution"}
		}
	}
	return trace.Step{Kind: trace.KindMessage, Agent: name, Text: text}
}
