// Package judge annotates traces with the 14 MAST failure modes through an
// OpenAI-compatible chat-completions endpoint. It renders a trace compactly
// with stable step ids, splits traces too long for the model's context into
// overlapping windows, asks for strict JSON with evidence, checks every
// cited step and quote against the trace, retries once with the exact
// problems, and records what could not be made valid as a failure rather
// than as "absent".
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
// taxonomy's definitions and the answer format. It comes first and never
// varies between traces, so endpoints that cache prompt prefixes reuse it.
var systemPrompt = buildSystemPrompt(taxonomy.MAST)

func buildSystemPrompt(tax *taxonomy.Taxonomy) string {
	var b strings.Builder
	b.WriteString(`You review one run of an LLM agent (a trace) and decide, for each of the 14 failure modes defined below, whether the trace shows it. A program checks every step id and quote you give against the trace.

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
		fmt.Fprintf(&b, "%s %s (%s): %s\n", m.Code, m.Name, cats[m.Category], m.Definition)
	}
	b.WriteString(`
RULES
1. Decide each mode on its own, from what the trace shows. Report a mode even when the run succeeded anyway: the question is whether it happened, not whether it mattered.
2. FM-3.2 and FM-3.3 are easily swapped. FM-3.3: the run claims success or claims a check, and the claim is false or has no support in the trace, which includes declaring the work done without having checked it. FM-3.2: a check that was needed is missing for an essential aspect or too shallow, while nothing false is claimed. A run that asserts success without evidence is FM-3.3, not FM-3.2.
3. Evidence: for a mode marked present, cite the ids of the steps where it shows (the most telling first, at most 5) and copy a quote of 3 to 30 words exactly as it appears in one of the cited steps: the same characters, no paraphrase, no ellipsis, nothing from a step header, a cut marker, a reference line, the summary or the TASK section. A mode you cannot support with a step and a quote is absent.
4. For a mode marked absent, give "steps": [] and "quote": "".
5. "confidence" is your probability, from 0 to 1, that your verdict on the mode is right.
6. "explanation" is one sentence saying why.
7. "summary": two to four sentences on what the agent did and how the run went; when you are shown a part, cover everything up to the end of that part, earlier summary included. It is passed on to the next part.
8. "task_success": "success", "failure" or "unknown": your guess whether the run achieved its task.

ANSWER FORMAT
Reply with one JSON object and nothing else, with an entry for every code from FM-1.1 to FM-3.3:
{"modes": {"FM-1.1": {"present": false, "confidence": 0.9, "steps": [], "quote": "", "explanation": "..."}, "FM-1.2": {...}, ..., "FM-3.3": {"present": true, "confidence": 0.7, "steps": ["S41"], "quote": "words copied from S41", "explanation": "..."}}, "summary": "...", "task_success": "failure"}
Step ids are strings of the form "S12".
`)
	return b.String()
}

// answerSchema is the JSON schema of an answer, sent as response_format
// where the endpoint supports it. Every property is required and no other
// is allowed, as strict structured-output modes demand. The mode entry is
// repeated rather than referenced because not every endpoint resolves $ref.
var answerSchema = buildAnswerSchema(taxonomy.MAST)

func buildAnswerSchema(tax *taxonomy.Taxonomy) json.RawMessage {
	entry := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"present":     map[string]any{"type": "boolean"},
			"confidence":  map[string]any{"type": "number"},
			"steps":       map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"quote":       map[string]any{"type": "string"},
			"explanation": map[string]any{"type": "string"},
		},
		"required":             []string{"present", "confidence", "steps", "quote", "explanation"},
		"additionalProperties": false,
	}
	modes := map[string]any{}
	codes := make([]string, len(tax.Modes))
	for i, m := range tax.Modes {
		modes[m.Code] = entry
		codes[i] = m.Code
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"modes":        map[string]any{"type": "object", "properties": modes, "required": codes, "additionalProperties": false},
			"summary":      map[string]any{"type": "string"},
			"task_success": map[string]any{"type": "string", "enum": taskSuccessValues},
		},
		"required":             []string{"modes", "summary", "task_success"},
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
	b.WriteString("Reply with the complete corrected JSON object, every mode from FM-1.1 to FM-3.3 included. Quotes must be copied exactly from a cited step; when no quote supports a mode, mark it absent.")
	return b.String()
}
