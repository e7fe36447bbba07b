// Package judge annotates traces with the 14 MAST failure modes through an
// OpenAI-compatible chat-completions endpoint. It renders a trace compactly
// with stable step ids, splits traces too long for the model's context into
// overlapping windows, asks for strict JSON with evidence, checks every
// cited step and quote against the trace, retries once with the exact
// problems, and records what could not be made valid as a failure rather
// than as "absent". A run that failed because of the harness or the
// infrastructure is not forced into MAST modes: the detectors' system
// failures alone keep it from the model, and the model may answer one.
package judge

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/faultline/faultline/taxonomy"
)

// promptRevision is bumped whenever the wording of the prompt or the way a
// trace is rendered changes, so that traces judged with the old prompt are
// judged again.
const promptRevision = 2

// systemPrompt is the static part of every call: instructions, the
// taxonomies' definitions and the answer format. It comes first and never
// varies between traces, so endpoints that cache prompt prefixes reuse it.
var systemPrompt = buildSystemPrompt(taxonomy.MAST, taxonomy.System)

// promptDefinitions replace the taxonomy's definition of a few modes in the
// prompt, where judges were seen to over-label them: the wording here draws
// the line against the neighbouring modes and against system failures,
// which the taxonomy's one-line definitions leave open (the taxonomy's
// FM-1.5 counts a harness re-prompting into silence, FM-3.1 an aborted
// turn; both are system failures for the judge).
var promptDefinitions = map[string]string{
	"FM-1.3": "The agent needlessly redoes a step, tool call or phase it has already completed, and the repeat brings nothing new: the same call with the same arguments returning the same result, the same plan or analysis written out again, the same message sent twice. What matters is what the repeat gained: one that could have turned out differently, or that something since then made necessary, is ordinary work.",
	"FM-1.5": "The agent does not see that it should stop, and carries on: it keeps taking turns after the objective is met and the answer given, goes past a stop condition it was given (a step or turn budget, an instruction to stop or to end with a given word), or circles through calls that bring nothing new instead of concluding.",
	"FM-3.1": "The agent chooses to end its work before the objective is met or before it has gathered what it needs: it stops with the required output missing or invalid, or answers after little or no evidence gathering. A run cut off by the harness or the model endpoint is a system failure, not this mode.",
}

func buildSystemPrompt(tax, sys *taxonomy.Taxonomy) string {
	var b strings.Builder
	b.WriteString(`You review one run of an LLM agent (a trace). First decide whether the run failed because of the harness or the infrastructure rather than the agent (a system failure, defined below). If it did not, decide for each of the 14 failure modes defined below whether the trace shows it. A program checks every step id and quote you give against the trace.

HOW THE TRACE IS SHOWN
- Every step has an id: a header such as [S12 tool_result shell exit=1 for S11] opens step 12. The header gives the step's kind (message, reasoning, tool_call, tool_result, final, system, error), who produced it, the tool, the exit status, and for a tool result the call it answers.
- Long texts are cut in the middle; a line "[… 1,234 characters cut …]" marks the gap. Do not guess what was cut.
- A step whose text is identical to an earlier step's is shown as "(identical to S7)".
- A long trace is shown in parts. Each part repeats the task setup steps, then gives a summary of the earlier parts, then its own steps. Judge what the steps shown to you contain; use the summary as context only.
- After the steps, findings of deterministic detectors may be listed as hints. They are usually right about what happened, not always about whether it is a failure: confirm or reject each one on the evidence.

THE FAILURE MODES
`)
	cats := map[string]string{}
	for _, c := range tax.Categories {
		cats[c.ID] = c.Name
	}
	for _, m := range tax.Modes {
		def := m.Definition
		if d, ok := promptDefinitions[m.Code]; ok {
			def = d
		}
		fmt.Fprintf(&b, "%s %s (%s): %s\n", m.Code, m.Name, cats[m.Category], def)
	}
	b.WriteString(`
SYSTEM FAILURES (THE HARNESS OR THE INFRASTRUCTURE, NOT THE AGENT)
The failure modes above describe what the agent did. A run can also fail through no doing of the agent's: then there may be no agent behaviour to judge, and forcing it into the modes above would blame the agent for the harness. Such a run is a system failure, with one of these codes:
`)
	for _, m := range sys.Modes {
		fmt.Fprintf(&b, "%s %s: %s\n", m.Code, m.Name, m.Definition)
	}
	b.WriteString(`
RULES
1. Decide each mode on its own, from what the trace shows. Report a mode even when the run succeeded anyway: the question is whether it happened, not whether it mattered.
2. FM-3.2 and FM-3.3 are easily swapped. FM-3.3: the run claims success or claims a check, and the claim is false or has no support in the trace, which includes declaring the work done without having checked it. FM-3.2: a check that was needed is missing for an essential aspect or too shallow, while nothing false is claimed. A run that asserts success without evidence is FM-3.3, not FM-3.2.
3. FM-1.3 needs a repeat that gained nothing. It is FM-1.3: the agent lists the same pods twice in a row and gets the same listing; a coder agent posts the same function again, unchanged, in its next turn; a planner restates its whole plan at every turn. It is not FM-1.3: a closing message that sums up results found earlier; querying again after something changed (a restart, a fix, a new file); re-reading a value that moves over time; checking a metric a second time to confirm it before relying on it; several agents each reporting their own part of one result. One repeated call in a long productive run is weak evidence; using the same tool often with different arguments is not repetition.
4. FM-1.5 needs an agent that should have stopped and did not. It is FM-1.5: after writing its final answer the agent keeps calling tools; the task says to reply DONE when finished, the work is accepted, and the agents keep exchanging messages; the agent runs into its step budget while cycling through the same few checks. It is not FM-1.5: a conversation that goes on because another agent still has work to do (a tester yet to run the tests, a reviewer yet to reply); a harness that prompts again because the model's turn came back empty (that is a system failure); an agent that stops before the objective is met (that is FM-3.1, the opposite).
5. "system_failure": mark it present when the run failed because of the harness or the infrastructure, not the agent: the model never answered or its turn came back empty (the harness then prompting into silence), a turn was aborted, a tool server or the harness failed through no fault of the agent's arguments, a rate limit or quota refused a request, or the conversation no longer fitted in the context window. Give the code, the steps and a quote as for a mode. Errors the agent caused with its own tool arguments (a malformed command, a whole script passed as the program name, a wrong file type or a path that does not exist given to a tool) are the agent's: judge them with the failure modes, not as a system failure. A harness error the run got past (a request retried and then answered) is not a system failure of the run either.
6. When "system_failure" is present, no failure mode is kept for the run: mark every mode absent. When it is absent, give "code": "", "steps": [] and "quote": "".
7. Evidence: for a mode or a system failure marked present, cite the ids of the steps where it shows (the most telling first, at most 5) and copy a quote of 3 to 30 words exactly as it appears in one of the cited steps: the same characters, no paraphrase, no ellipsis, nothing from a step header, a cut marker, a reference line, the summary or the TASK section. A mode or a system failure you cannot support with a step and a quote is absent.
8. For a mode marked absent, give "steps": [] and "quote": "".
9. "confidence" is your probability, from 0 to 1, that your verdict on the mode (or on the system failure) is right.
10. "explanation" is one sentence saying why.
11. "summary": two to four sentences on what the agent did and how the run went; when you are shown a part, cover everything up to the end of that part, earlier summary included. It is passed on to the next part.
12. "task_success": "success", "failure" or "unknown": your guess whether the run achieved its task.

ANSWER FORMAT
Reply with one JSON object and nothing else, with the system failure verdict and an entry for every code from FM-1.1 to FM-3.3:
{"system_failure": {"present": false, "code": "", "confidence": 0.9, "steps": [], "quote": "", "explanation": "..."}, "modes": {"FM-1.1": {"present": false, "confidence": 0.9, "steps": [], "quote": "", "explanation": "..."}, "FM-1.2": {...}, ..., "FM-3.3": {"present": true, "confidence": 0.7, "steps": ["S41"], "quote": "words copied from S41", "explanation": "..."}}, "summary": "...", "task_success": "failure"}
A system failure is answered as {"system_failure": {"present": true, "code": "SYS-1", "confidence": 0.8, "steps": ["S3", "S4"], "quote": "words copied from S3", "explanation": "..."}, "modes": {every mode absent}, ...}.
Step ids are strings of the form "S12".
`)
	return b.String()
}

// answerSchema is the JSON schema of an answer, sent as response_format
// where the endpoint supports it. Every property is required and no other
// is allowed, as strict structured-output modes demand. The mode entry is
// repeated rather than referenced because not every endpoint resolves $ref.
var answerSchema = buildAnswerSchema(taxonomy.MAST, taxonomy.System)

func buildAnswerSchema(tax, sys *taxonomy.Taxonomy) json.RawMessage {
	props := map[string]any{
		"present":     map[string]any{"type": "boolean"},
		"confidence":  map[string]any{"type": "number"},
		"steps":       map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"quote":       map[string]any{"type": "string"},
		"explanation": map[string]any{"type": "string"},
	}
	required := []string{"present", "confidence", "steps", "quote", "explanation"}
	entry := map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	// The system failure is an entry with its code; "" when it is absent.
	sysCodes := []string{""}
	for _, m := range sys.Modes {
		sysCodes = append(sysCodes, m.Code)
	}
	sysProps := map[string]any{"code": map[string]any{"type": "string", "enum": sysCodes}}
	for k, v := range props {
		sysProps[k] = v
	}
	sysEntry := map[string]any{"type": "object", "properties": sysProps, "required": append([]string{"code"}, required...), "additionalProperties": false}
	modes := map[string]any{}
	codes := make([]string, len(tax.Modes))
	for i, m := range tax.Modes {
		modes[m.Code] = entry
		codes[i] = m.Code
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"system_failure": sysEntry,
			"modes":          map[string]any{"type": "object", "properties": modes, "required": codes, "additionalProperties": false},
			"summary":        map[string]any{"type": "string"},
			"task_success":   map[string]any{"type": "string", "enum": taskSuccessValues},
		},
		"required":             []string{"system_failure", "modes", "summary", "task_success"},
		"additionalProperties": false,
	}
	b, err := json.Marshal(schema)
	if err != nil {
		panic(fmt.Sprintf("judge: answer schema: %v", err))
	}
	return b
}

// taskSuccessValues are the answers allowed for task_success.
var taskSuccessValues = []string{"success", "failure", "unknown"}

// PromptVersion identifies the prompt and rendering a judgement was made
// with: a run skips traces already judged with the same version. It covers
// the static prompt, the answer schema and the rendering limits.
func PromptVersion(r RenderOptions) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%+v", promptRevision, systemPrompt, answerSchema, r)
	return fmt.Sprintf("p%d-%s", promptRevision, hex.EncodeToString(h.Sum(nil))[:12])
}

// SystemPrompt returns the static system message.
func SystemPrompt() string { return systemPrompt }

// userPrompt is the variable part of a call: one view of the trace, the
// summary of what came before it, and the detectors' hints.
func userPrompt(v *view) string {
	var b strings.Builder
	b.WriteString(v.header)
	if v.windows > 1 {
		fmt.Fprintf(&b, "\nPART %d OF %d: steps %s", v.window+1, v.windows, v.span())
		if len(v.pinned) > 0 {
			fmt.Fprintf(&b, ", after the task setup steps %s", spanOf(v.pinned))
		}
		b.WriteString(".\n")
	}
	if v.summary != "" {
		fmt.Fprintf(&b, "\nSUMMARY OF THE EARLIER PARTS (written when judging them):\n%s\n", v.summary)
	}
	b.WriteString("\nSTEPS\n")
	b.WriteString(v.steps)
	b.WriteString("\nDETECTOR HINTS\n")
	if v.hints == "" {
		b.WriteString("none\n")
	} else {
		b.WriteString(v.hints)
	}
	if v.windows > 1 {
		b.WriteString("\nAnswer with the JSON object for the steps of this part, every mode included.\n")
	} else {
		b.WriteString("\nAnswer with the JSON object, every mode included.\n")
	}
	return b.String()
}

// correction is the one corrective message sent after an answer that could
// not be accepted: it lists exactly what was wrong.
func correction(problems []string) string {
	var b strings.Builder
	b.WriteString("Your answer could not be accepted:\n")
	for _, p := range problems {
		fmt.Fprintf(&b, "- %s\n", p)
	}
	b.WriteString("Reply with the complete corrected JSON object, the system failure verdict and every mode from FM-1.1 to FM-3.3 included. Quotes must be copied exactly from a cited step; when no quote supports a mode or a system failure, mark it absent.")
	return b.String()
}
