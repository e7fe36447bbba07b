package synth

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// What the simulated runs share with real Zero runs: the Codex CLI version
// and MCP server name that ITBench's Zero uses, and the harness's retry
// prompt, word for word, since faultline recognises it by its wording.
const (
	cliVersion = "0.80.0"
	mcpServer  = "mcp__offline_incident_analysis__"
	answerFile = "agent_output.json"
	nudgeText  = "I don't see agent_output.json file. Please resume the investigation and make sure to create the agent_output.json file as instructed earlier."
)

// run is one simulated Zero run: a model working one scenario, one trial.
type run struct {
	model string
	sc    *scenario
	trial int
	start time.Time
	// salt is mixed into the session and call ids, so that corpora of
	// different seeds never share an id; the examples have none.
	salt string
	// answer is what the run writes to agent_output.json, exactly; empty if
	// it never writes one. It need not be valid JSON.
	answer string
	steps  []step
	// plants describes each mode planted in the run; the steps that carry
	// it are marked with its code.
	plants []plant
}

// plant is a failure mode put into a run on purpose.
type plant struct {
	mode    string // a taxonomy code, or ModeSystem
	variant string // which way it was planted, e.g. "identical-call"
	how     string // what the run does, in one sentence
}

func (r *run) key() string { return fmt.Sprintf("%s/%s/%d", r.model, r.sc.id, r.trial) }

// dir is the run directory, <model>/<scenario>/<trial>, the path from which
// faultline reads the scenario and trial.
func (r *run) dir() string { return r.key() }

// cwd is where the run pretends to have worked.
func (r *run) cwd() string { return "/home/zero/runs/" + r.key() }

// id is the session id: a UUIDv7, like the CLI's, whose time is the start
// of the run and whose random bits come from the run's name.
func (r *run) id() string {
	h := sha256.Sum256([]byte(r.salt + r.key()))
	var u [16]byte
	ms := uint64(r.start.UnixMilli())
	for i := range 6 {
		u[i] = byte(ms >> (40 - 8*i))
	}
	copy(u[6:], h[:10])
	u[6] = 0x70 | u[6]&0x0f
	u[8] = 0x80 | u[8]&0x3f
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// rolloutPath is where the CLI files the session, under the run directory.
func (r *run) rolloutPath() string {
	return fmt.Sprintf("sessions/%s/rollout-%s-%s.jsonl", r.start.Format("2006/01/02"), r.start.Format("2006-01-02T15-04-05"), r.id())
}

func (r *run) answerJSON() string {
	if r.answer == "" {
		panic(r.key() + " writes no " + answerFile)
	}
	return r.answer
}

// agentsMD is the task prompt Zero puts in the run directory; the CLI sends
// it to the model as the session's instructions.
func (r *run) agentsMD() string {
	return fmt.Sprintf(`# Task: offline root-cause analysis

You are the on-call SRE for the OpenTelemetry Astronomy Shop, which runs in the Kubernetes
namespace otel-demo. An incident has happened. You cannot reach the cluster; what you have is
a read-only snapshot of its alerts, Kubernetes events and object specs, logs, traces and metrics:

    %s

Rules:
- You MUST NOT read ground_truth.yaml, or any other answer key, under any circumstances.
- Use only the snapshot above; do not search the rest of the filesystem.
- Your working directory is %s. Write nothing anywhere else.

Find the entities that caused the incident and those it impacted, and how it spread.
Write your diagnosis to %s in the working directory, then check that the file
parses with jq; if it does not, fix it and check again. The file holds one JSON object:

{
  "entities": [
    {
      "name": "otel-demo/<Kind>/<name>",
      "contributing_factor": true,
      "reasoning": "why this entity caused the incident, or how it was affected",
      "evidence": "the alerts, events, logs, metrics or traces that show it"
    }
  ],
  "propagations": [
    {
      "source": "otel-demo/<Kind>/<name>",
      "target": "otel-demo/<Kind>/<name>",
      "condition": "the state of the source that spread",
      "effect": "what it did to the target"
    }
  ],
  "alerts_explained": [
    {"alert": "<alert name>", "explanation": "which entity fired it and why", "explained": true}
  ]
}

List the causes (contributing_factor true) first, most likely first, then the impacted
entities (contributing_factor false). Name Deployments rather than pods where you can.
Explain every firing alert.
`, r.sc.snapshot, r.cwd(), answerFile)
}

// action is what a step of a run does.
type action int

const (
	doCall     action = iota // call a tool and read its result
	doSay                    // write a message; without a tool call, this ends the model's turn
	doIdle                   // a turn in which the model produces nothing at all
	doPatch                  // apply_patch adding agent_output.json with the run's answer
	doBadPatch               // the same call with its arguments cut short, which the CLI cannot parse
	doValidate               // check agent_output.json with jq, as the task demands
	doAbort                  // a turn the CLI aborts before the model answers
	doNudge                  // the harness's retry prompt, sent when a turn ended without the answer file
)

// step is one entry of a run's script. Every step but doNudge is a model
// turn, which may open with a reasoning summary.
type step struct {
	act   action
	think string
	// text is the message of doSay; on a call, a message the model writes
	// before making the call in the same turn.
	text  string
	call  call // doCall
	marks []mark
}

// mark says that a step carries a planted mode, and which of the trace
// steps it turns into is the planted location.
type mark struct {
	mode string
	at   part
}

// part names one of the trace steps a script step becomes.
type part int

const (
	atAction part = iota // the call, the message, the nudge, the abort (for an idle turn: the step after it)
	atThink              // the reasoning summary
	atText               // the message written before a call
)

// thinking gives the step's turn a reasoning summary.
func (s step) thinking(text string) step {
	s.think = text
	return s
}

// saying makes the model write text before the step's call, in the same turn.
func (s step) saying(text string) step {
	s.text = text
	return s
}

// mark marks the step's action as a location of the planted mode.
func (s step) mark(mode string) step { return s.markAt(mode, atAction) }

func (s step) markAt(mode string, at part) step {
	s.marks = append(append([]mark(nil), s.marks...), mark{mode, at})
	return s
}

func do(c call) step       { return step{act: doCall, call: c} }
func say(text string) step { return step{act: doSay, text: text} }
func idle() step           { return step{act: doIdle} }
func patch() step          { return step{act: doPatch} }
func truncatedPatch() step { return step{act: doBadPatch} }
func validate() step       { return step{act: doValidate} }
func abort() step          { return step{act: doAbort} }
func nudge() step          { return step{act: doNudge} }

// call is a tool call as the rollout records it: the arguments the model
// sent and the output string the CLI logged.
type call struct {
	name string
	args string
	out  string
	took float64 // seconds
}

// shell is a call of the CLI's shell tool. Its output is the JSON string
// the CLI logs for commands: the output with the exit code and duration.
func shell(cmd, output string, exit int, took float64) call {
	return call{
		name: "shell",
		args: compactJSON(obj{{"command", []string{"bash", "-lc", cmd}}}),
		out:  shellOutput(output, exit, took),
		took: took,
	}
}

func shellOutput(output string, exit int, took float64) string {
	return compactJSON(obj{{"output", output}, {"metadata", obj{{"exit_code", exit}, {"duration_seconds", took}}}})
}

// mcp is a call of one of Zero's offline analysis tools, served over MCP;
// results come back as a list of content parts.
func mcp(tool string, args map[string]any, text string) call {
	return call{
		name: mcpServer + tool,
		args: compactJSON(args),
		out:  compactJSON([]obj{{{"type", "text"}, {"text", text}}}),
		took: 0.8,
	}
}

// plan is an update_plan call: the items before current are done, current
// is in progress, the rest are pending.
func plan(explanation string, current int, items ...string) step {
	var list []obj
	for i, it := range items {
		status := "pending"
		switch {
		case i < current:
			status = "completed"
		case i == current:
			status = "in_progress"
		}
		list = append(list, obj{{"step", it}, {"status", status}})
	}
	return do(call{
		name: "update_plan",
		args: compactJSON(obj{{"explanation", explanation}, {"plan", list}}),
		out:  "Plan updated",
		took: 0.01,
	})
}

// addFile is an apply_patch call creating a file, the way the CLI's patch
// tool takes a new file: every line prefixed with "+".
func addFile(name, content string) call {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Add File: " + name + "\n")
	for line := range strings.SplitSeq(content, "\n") {
		b.WriteString("+" + line + "\n")
	}
	b.WriteString("*** End Patch")
	return patchCall(b.String(), "A "+name)
}

// updateFile is an apply_patch call replacing the line old of a file by new.
func updateFile(name, old, new string) call {
	return patchCall("*** Begin Patch\n*** Update File: "+name+"\n@@\n-"+old+"\n+"+new+"\n*** End Patch", "M "+name)
}

func patchCall(body, changed string) call {
	return call{
		name: "apply_patch",
		args: compactJSON(obj{{"input", body}}),
		out:  shellOutput("Success. Updated the following files:\n"+changed+"\n", 0, 0.1),
		took: 0.1,
	}
}

// usage is the CLI's token usage record. Output tokens include reasoning
// tokens, as in the API it reports from.
type usage struct {
	Input     int `json:"input_tokens"`
	Cached    int `json:"cached_input_tokens"`
	Output    int `json:"output_tokens"`
	Reasoning int `json:"reasoning_output_tokens"`
	Total     int `json:"total_tokens"`
}

// writer renders a run as a rollout file, one event per line, on a clock
// that advances by made-up but plausible latencies. It also numbers the
// trace steps as faultline's Codex ingest will (one per message, reasoning
// summary, call, result or aborted turn; none for turn contexts and token
// counts), which is how the planted locations get their indices.
type writer struct {
	r       *run
	now     time.Time
	buf     bytes.Buffer
	calls   int
	context int // tokens the model reads at its next turn
	cached  int // of those, the prefix it already read at its last turn
	total   usage
	steps   int              // trace steps written so far
	planted map[string][]int // mode → the trace steps it was planted at
	pending []mark           // marks of an idle turn, waiting for the next step
	idle    bool             // the last turn written was idle
}

// rollout is a run rendered: the file, how many steps faultline will see in
// it, and where each mode was planted.
type rollout struct {
	data    []byte
	steps   int
	planted map[string][]int
}

func writeRollout(r *run) rollout {
	w := &writer{r: r, now: r.start, context: 2600 + tokens(r.agentsMD()), planted: map[string][]int{}}
	w.tick(30 * time.Millisecond)
	w.event("session_meta", obj{
		{"id", r.id()}, {"timestamp", stamp(r.start)}, {"cwd", r.cwd()}, {"originator", "codex_exec"},
		{"cli_version", cliVersion}, {"instructions", r.agentsMD()}, {"source", "exec"}, {"model_provider", "simulated"},
	})
	// The CLI injects AGENTS.md and the environment as user messages of their
	// own; only what the user typed is mirrored as a user_message event.
	w.userItem("# AGENTS.md instructions for " + r.cwd() + "\n\n<INSTRUCTIONS>\n" + r.agentsMD() + "</INSTRUCTIONS>")
	w.userItem("<environment_context>\n  <cwd>" + r.cwd() + "</cwd>\n  <approval_policy>never</approval_policy>\n" +
		"  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n  <shell>bash</shell>\n</environment_context>")
	w.tick(2 * time.Millisecond)
	w.user("Begin investigation")
	for _, s := range r.steps {
		w.step(s)
	}
	if w.idle {
		// Ingest records a last turn the model never answered as a step of
		// its own, where the idle turn's marks are located.
		w.next()
	}
	return rollout{data: w.buf.Bytes(), steps: w.steps, planted: w.planted}
}

func (w *writer) step(s step) {
	if s.act != doNudge {
		// A nudge starts no turn: the last turn stays what it was.
		w.idle = s.act == doIdle && s.think == ""
	}
	if s.act == doNudge {
		w.tick(600 * time.Millisecond)
		w.locate(s, atAction, w.user(nudgeText))
		return
	}
	w.tick(250 * time.Millisecond)
	w.event("turn_context", obj{
		{"cwd", w.r.cwd()}, {"approval_policy", "never"},
		{"sandbox_policy", obj{{"type", "workspace-write"}, {"network_access", false}}},
		{"model", w.r.model}, {"effort", "medium"}, {"summary", "auto"},
	})
	reasoning := 0
	if s.think != "" {
		reasoning = tokens(s.think) + 40 // the summary is shorter than the reasoning it sums up
		w.tick(latency(reasoning))
		w.event("event_msg", obj{{"type", "agent_reasoning"}, {"text", s.think}})
		w.event("response_item", obj{{"type", "reasoning"}, {"summary", []obj{{{"type", "summary_text"}, {"text", s.think}}}}, {"content", nil}})
		w.locate(s, atThink, w.next())
	}
	switch s.act {
	case doSay:
		w.tick(latency(tokens(s.text)))
		w.locate(s, atAction, w.agentMessage(s.text))
		w.count(reasoning, tokens(s.text))
	case doIdle:
		w.tick(latency(0))
		w.count(reasoning, 0)
		w.pending = append(w.pending, s.marks...)
	case doAbort:
		w.tick(100 * time.Millisecond)
		w.event("event_msg", obj{{"type", "turn_aborted"}, {"reason", "interrupted"}})
		w.locate(s, atAction, w.next())
	default:
		c := w.resolve(s)
		written := 0
		if s.text != "" {
			w.tick(latency(tokens(s.text)))
			w.locate(s, atText, w.agentMessage(s.text))
			written = tokens(s.text)
		}
		w.calls++
		id := w.callID()
		w.tick(latency(tokens(c.args)))
		w.event("response_item", obj{{"type", "function_call"}, {"name", c.name}, {"arguments", c.args}, {"call_id", id}})
		w.locate(s, atAction, w.next())
		w.count(reasoning, written+tokens(c.args))
		w.tick(time.Duration(c.took * float64(time.Second)))
		w.event("response_item", obj{{"type", "function_call_output"}, {"call_id", id}, {"output", c.out}})
		w.next()
		w.context += tokens(c.out)
	}
}

// next numbers a trace step just written. A mark left by an idle turn
// locates at the first step after it.
func (w *writer) next() int {
	i := w.steps
	w.steps++
	for _, m := range w.pending {
		w.planted[m.mode] = append(w.planted[m.mode], i)
	}
	w.pending = nil
	return i
}

// locate records trace step i as a planted location of every mode that
// step s marks at part at.
func (w *writer) locate(s step, at part, i int) {
	for _, m := range s.marks {
		if m.at == at {
			w.planted[m.mode] = append(w.planted[m.mode], i)
		}
	}
}

// resolve turns the steps that depend on the run's answer into calls.
func (w *writer) resolve(s step) call {
	switch s.act {
	case doPatch:
		return addFile(answerFile, w.r.answerJSON())
	case doBadPatch:
		// A model that runs out of output mid-call leaves arguments the CLI
		// cannot parse; it says so in the output, and nothing is written.
		c := addFile(answerFile, w.r.answerJSON())
		c.args = c.args[:len(c.args)*2/5]
		c.out = fmt.Sprintf("failed to parse function arguments: EOF while parsing a string at line 1 column %d", len(c.args))
		return c
	case doValidate:
		return jqCheck(w.r.answerJSON())
	}
	return s.call
}

// jqCheck is the check the task asks for, run on answer: jq prints the
// number of entities, or fails as jq 1.7 does on a file it cannot parse.
func jqCheck(answer string) call {
	const cmd = "jq -e '.entities | length' " + answerFile
	var d struct {
		Entities []json.RawMessage `json:"entities"`
	}
	err := json.Unmarshal([]byte(answer), &d)
	var syn *json.SyntaxError
	switch {
	case err == nil:
		return shell(cmd, fmt.Sprintf("%d\n", len(d.Entities)), 0, 0.1)
	case errors.As(err, &syn):
		before := answer[:syn.Offset]
		line, col := strings.Count(before, "\n")+1, len(before)-strings.LastIndex(before, "\n")-1
		what := "Expected separator between values"
		if int(syn.Offset) >= len(answer) {
			what = "Unfinished JSON term at EOF"
		}
		return shell(cmd, fmt.Sprintf("jq: parse error: %s at line %d, column %d\n", what, line, col), 2, 0.1)
	default:
		panic(fmt.Sprintf("answer is JSON of the wrong shape: %v", err))
	}
}

func (w *writer) callID() string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	h := sha256.Sum256(fmt.Appendf(nil, "%s%s#%d", w.r.salt, w.r.key(), w.calls))
	id := make([]byte, 24)
	for i := range id {
		id[i] = alphabet[int(h[i])%len(alphabet)]
	}
	return "call_" + string(id)
}

// user records a message the user (or the harness) typed: the response
// item and the event the CLI mirrors it with, one trace step.
func (w *writer) user(text string) int {
	i := w.userItem(text)
	w.event("event_msg", obj{{"type", "user_message"}, {"message", text}, {"images", []string{}}})
	return i
}

func (w *writer) userItem(text string) int {
	w.event("response_item", obj{{"type", "message"}, {"role", "user"}, {"content", []obj{{{"type", "input_text"}, {"text", text}}}}})
	w.context += tokens(text)
	return w.next()
}

// agentMessage records a message of the model: the event for the UI and the
// response item, one trace step.
func (w *writer) agentMessage(text string) int {
	w.event("event_msg", obj{{"type", "agent_message"}, {"message", text}})
	w.event("response_item", obj{{"type", "message"}, {"role", "assistant"}, {"content", []obj{{{"type", "output_text"}, {"text", text}}}}})
	return w.next()
}

// count records a turn's token usage: it read the whole context (all but
// the newest part cached) and wrote output tokens, reasoning included.
func (w *writer) count(reasoning, output int) {
	last := usage{Input: w.context, Cached: w.cached, Output: output + reasoning, Reasoning: reasoning}
	last.Total = last.Input + last.Output
	w.total.Input += last.Input
	w.total.Cached += last.Cached
	w.total.Output += last.Output
	w.total.Reasoning += last.Reasoning
	w.total.Total += last.Total
	w.cached = w.context
	w.context += output
	w.event("event_msg", obj{{"type", "token_count"}, {"info", obj{
		{"total_token_usage", w.total}, {"last_token_usage", last}, {"model_context_window", 128000},
	}}, {"rate_limits", nil}})
}

func (w *writer) event(typ string, payload obj) {
	w.buf.WriteString(compactJSON(obj{{"timestamp", stamp(w.now)}, {"type", typ}, {"payload", payload}}))
	w.buf.WriteByte('\n')
}

func (w *writer) tick(d time.Duration) { w.now = w.now.Add(d) }

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// tokens estimates the tokens of a text at four bytes a token.
func tokens(s string) int { return (len(s) + 3) / 4 }

// latency is how long the model takes to write n tokens.
func latency(n int) time.Duration {
	return 700*time.Millisecond + time.Duration(n)*12*time.Millisecond
}
