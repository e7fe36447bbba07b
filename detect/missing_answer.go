package detect

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/faultline/faultline/internal/itbench"
	"github.com/faultline/faultline/trace"
)

// MissingAnswer finds FM-3.1 where the run ends without the output its task requires.
var MissingAnswer = &Detector{
	Name: "missing-answer",
	Mode: "FM-3.1",
	Doc: `The run ends without the output file its task requires, or with one that cannot be used.
The task must name the file ("Write your diagnosis to: …/agent_output.json"; read from Trace.Task,
else from the harness's instructions). Reported when: no call ever wrote the file (confidence 0.9);
no attempt to write it succeeded (0.85); its final content, when the trace shows it (the run
directory's copy, a complete write, or a later jq or cat of it), is not valid JSON (0.85); or, for
ITBench Zero's agent_output.json, it is not an object with an "entities" list, names no entity, has
an entity without a name, or marks no entity with a boolean contributing_factor (0.8, 0.7 for an
empty list, 0.75 for no contributing_factor), which leaves nothing to score. Deviations from the
prescribed schema are FM-1.1 (answer-format), reported alongside when they also leave nothing to
score.
A run in which the agent never produced a step, or that ended because the model's last turn came
back empty (the format logged the turn and nothing followed) when the agent had never ended a turn by
speaking, is left to empty-model-response (SYS-1): FM-3.1 is for an agent that stops on its own.
Blind spots: a file written by a command faultline does not recognise as a write, and never read
back, counts as written only when some other call touching it succeeded; a final version changed by
a patch and never printed again is not checked.`,
	Run:      runMissingAnswer,
	Finished: true,
}

func runMissingAnswer(p *Pass) {
	t, f := p.Trace, p.facts
	if !f.agentActed() || (endedSilent(t) >= 0 && !stoppedBySpeaking(t)) {
		// A run that stopped because the model's turn came back empty, the
		// agent never having ended a turn on its own, did not choose to stop:
		// that is empty-model-response's (SYS-1).
		return
	}
	a := f.answerFile()
	if a == nil {
		return
	}
	spec := f.task()
	if !a.Exists {
		if len(a.Writes) > 0 {
			p.Report(trace.Finding{
				Steps:      a.Writes,
				Quote:      a.File,
				Confidence: 0.85,
				Explanation: fmt.Sprintf("The task requires %s; the agent tried to write it %s and no attempt succeeded, so the run ended without it.",
					a.File, times(len(a.Writes))),
			})
			return
		}
		steps, quote := citeRequirement(f, spec.OutputPhrase, lastAgentStep(t))
		p.Report(trace.Finding{
			Steps:       steps,
			Quote:       quote,
			Confidence:  0.9,
			Explanation: fmt.Sprintf("The task requires the result in %s, and no call of the run ever wrote it: the run ended without its required output.", a.File),
		})
		return
	}
	if !a.ContentKnown {
		return
	}
	problem, conf := unusableAnswer(f, a.File, a.Content)
	if problem == "" {
		return
	}
	steps := f.contentSteps(a)
	p.Report(trace.Finding{
		Steps:       steps,
		Quote:       quotable(t, steps, a.File),
		Confidence:  conf,
		Explanation: fmt.Sprintf("The final %s %s, so the run ended without a usable answer.", a.File, problem),
	})
}

// unusableAnswer says what makes an output file's content unusable, with the
// confidence of that judgement, or "" when it is usable.
func unusableAnswer(f *facts, file, content string) (string, float64) {
	if strings.EqualFold(filepath.Ext(file), ".json") && !json.Valid([]byte(content)) {
		return "is not valid JSON", 0.85
	}
	if file != itbench.AnswerFile {
		return "", 0
	}
	answer := f.zeroAnswer(content)
	if answer.top == nil {
		return "is not a JSON object", 0.8
	}
	entities, ok := answer.objects("entities")
	switch {
	case answer.top["entities"] == nil:
		return `has no "entities" list`, 0.8
	case !ok:
		return `has an "entities" field that is not a list of objects`, 0.8
	case len(entities) == 0:
		return "names no entity", 0.7
	}
	marked := false
	for k, e := range entities {
		if name, _ := e["name"].(string); strings.TrimSpace(name) == "" {
			return fmt.Sprintf("has an entity without a name (entity %d)", k+1), 0.8
		}
		_, ok := e["contributing_factor"].(bool)
		marked = marked || ok
	}
	if !marked {
		// Scoring takes the causes in file order; with no entity marked, there are none.
		return "marks no entity as a cause or not (no boolean contributing_factor)", 0.75
	}
	return "", 0
}

// citeRequirement cites the step that gave the run a requirement, quoting the
// requirement's words, and the step where the run fell short of it; when no
// step holds the requirement, only the latter, without a quote.
func citeRequirement(f *facts, phrase string, at int) ([]int, string) {
	var steps []int
	quote := ""
	if ps := f.promptStep(phrase); ps >= 0 {
		steps = append(steps, ps)
		quote = phrase
	}
	if at >= 0 && (len(steps) == 0 || steps[0] != at) {
		steps = append(steps, at)
	}
	return steps, quote
}

// lastAgentStep returns the index of the agent's last step, or -1.
func lastAgentStep(t *trace.Trace) int {
	for i := len(t.Steps) - 1; i >= 0; i-- {
		if trace.ByAgent(&t.Steps[i]) {
			return i
		}
	}
	return -1
}

// stoppedBySpeaking reports whether the agent ever ended a turn on its own:
// a message, final answer or reasoning of the agent answered by a harness
// retry or by the end of the run, rather than followed by a tool call.
func stoppedBySpeaking(t *trace.Trace) bool {
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Type != trace.TypeRetryNudge && s.Type != trace.TypeEmptyTurn {
			continue
		}
		if before := lastMove(t, i); before >= 0 && spoke(&t.Steps[before]) {
			return true
		}
	}
	return false
}
