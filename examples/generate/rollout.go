package main

import (
	"bytes"
	"crypto/sha256"
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
	model  string
	sc     *scenario
	trial  int
	start  time.Time
	answer *diagnosis // what the run writes to agent_output.json; nil if it never writes one
	steps  []step
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
	h := sha256.Sum256([]byte(r.key()))
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
	if r.answer == nil {
		panic(r.key() + " writes no " + answerFile)
	}
	return strings.TrimSuffix(string(indentJSON(r.answer)), "\n")
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
	doPatch                  // apply_patch adding agent_output.json with the run's diagnosis
	doBadPatch               // the same call with its arguments cut short, which the CLI cannot parse
	doValidate               // check agent_output.json with jq, as the task demands
	doNudge                  // the harness's retry prompt, sent when a turn ended without the answer file
)

// step is one entry of a run's script. Every step but doNudge is a model
// turn, which may open with a reasoning summary.
type step struct {
	act   action
	think string
	text  string // doSay
	call  call   // doCall
}

// thinking gives the step's turn a reasoning summary.
func (s step) thinking(text string) step {
	s.think = text
	return s
}

func do(c call) step       { return step{act: doCall, call: c} }
func say(text string) step { return step{act: doSay, text: text} }
func idle() step           { return step{act: doIdle} }
func patch() step          { return step{act: doPatch} }
func truncatedPatch() step { return step{act: doBadPatch} }
func validate() step       { return step{act: doValidate} }
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

// patchCall writes content to agent_output.json with apply_patch, the way
// the CLI's patch tool takes a new file: every line prefixed with "+".
func patchCall(content string) call {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Add File: " + answerFile + "\n")
	for line := range strings.SplitSeq(content, "\n") {
		b.WriteString("+" + line + "\n")
	}
	b.WriteString("*** End Patch")
	return call{
		name: "apply_patch",
		args: compactJSON(obj{{"input", b.String()}}),
		out:  shellOutput("Success. Updated the following files:\nA "+answerFile+"\n", 0, 0.1),
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
// that advances by made-up but plausible latencies.
type writer struct {
	r       *run
	now     time.Time
	buf     bytes.Buffer
	calls   int
	context int // tokens the model reads at its next turn
	cached  int // of those, the prefix it already read at its last turn
	total   usage
}

func writeRollout(r *run) []byte {
	w := &writer{r: r, now: r.start, context: 2600 + tokens(r.agentsMD())}
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
	return w.buf.Bytes()
}

func (w *writer) step(s step) {
	if s.act == doNudge {
		w.tick(600 * time.Millisecond)
		w.user(nudgeText)
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
	}
	switch s.act {
	case doSay:
		w.tick(latency(tokens(s.text)))
		w.event("event_msg", obj{{"type", "agent_message"}, {"message", s.text}})
		w.event("response_item", obj{{"type", "message"}, {"role", "assistant"}, {"content", []obj{{{"type", "output_text"}, {"text", s.text}}}}})
		w.count(reasoning, tokens(s.text))
	case doIdle:
		w.tick(latency(0))
		w.count(reasoning, 0)
	default:
		c := w.resolve(s)
		w.calls++
		id := w.callID()
		w.tick(latency(tokens(c.args)))
		w.event("response_item", obj{{"type", "function_call"}, {"name", c.name}, {"arguments", c.args}, {"call_id", id}})
		w.count(reasoning, tokens(c.args))
		w.tick(time.Duration(c.took * float64(time.Second)))
		w.event("response_item", obj{{"type", "function_call_output"}, {"call_id", id}, {"output", c.out}})
		w.context += tokens(c.out)
	}
}

// resolve turns the steps that depend on the run's diagnosis into calls.
func (w *writer) resolve(s step) call {
	switch s.act {
	case doPatch:
		return patchCall(w.r.answerJSON())
	case doBadPatch:
		// A model that runs out of output mid-call leaves arguments the CLI
		// cannot parse; it says so in the output, and nothing is written.
		c := patchCall(w.r.answerJSON())
		c.args = c.args[:len(c.args)*2/5]
		c.out = fmt.Sprintf("failed to parse function arguments: EOF while parsing a string at line 1 column %d", len(c.args))
		return c
	case doValidate:
		return shell("jq -e '.entities | length' "+answerFile, fmt.Sprintf("%d\n", len(w.r.answer.Entities)), 0, 0.1)
	}
	return s.call
}

func (w *writer) callID() string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	h := sha256.Sum256(fmt.Appendf(nil, "%s#%d", w.r.key(), w.calls))
	id := make([]byte, 24)
	for i := range id {
		id[i] = alphabet[int(h[i])%len(alphabet)]
	}
	return "call_" + string(id)
}

// user records a message the user (or the harness) typed: the response
// item and the event the CLI mirrors it with.
func (w *writer) user(text string) {
	w.userItem(text)
	w.event("event_msg", obj{{"type", "user_message"}, {"message", text}, {"images", []string{}}})
}

func (w *writer) userItem(text string) {
	w.event("response_item", obj{{"type", "message"}, {"role", "user"}, {"content", []obj{{{"type", "input_text"}, {"text", text}}}}})
	w.context += tokens(text)
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
