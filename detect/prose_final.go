package detect

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/faultline/faultline/trace"
)

// ProseFinal finds FM-1.1 where the task allows nothing but the JSON answer
// and the agent closes the run with prose.
var ProseFinal = &Detector{
	Name: "prose-final",
	Mode: "FM-1.1",
	Doc: `The task forbids any output but the JSON answer, and the agent's closing message holds prose.
The prompt must say so in words ("NEVER output anything other than the final JSON", "Return only the
required JSON structure"); the closing message is the agent's last step, when it is a message and
not a tool call. It is reported when, set aside one JSON object (fenced or not), the message still
holds four words or more: a summary instead of the answer, or commentary around it; and only in a
run that produced its answer (in that message, or in the answer file the task names): a run that
stops with a plan and no answer is missing-answer's (FM-3.1). Confidence 0.7.
Blind spots: the rule as other prompts word it; JSON-only rules about the answer file rather than the
final message are answer-format's; a message that is wrong JSON with no prose (a truncated object)
is not this detector's to judge.`,
	Run:      runProseFinal,
	Finished: true,
}

func runProseFinal(p *Pass) {
	t, f := p.Trace, p.facts
	spec := f.task()
	if !spec.FinalJSONOnly {
		return
	}
	last := lastAgentStep(t)
	if last < 0 {
		return
	}
	s := &t.Steps[last]
	if s.Kind != trace.KindFinal && s.Kind != trace.KindMessage {
		return
	}
	before, after, hasJSON := proseAround(s.Text)
	words := len(strings.Fields(before)) + len(strings.Fields(after))
	if words < 4 {
		return
	}
	// A run that never produced its answer stopped early: that is
	// missing-answer's, whatever its last words.
	if a := f.answerFile(); !hasJSON && (a == nil || !a.Exists) {
		return
	}
	quote := firstLine(before, 160)
	if quote == "" {
		quote = firstLine(after, 160)
	}
	steps := []int{last}
	if ps := f.promptStep(spec.FinalJSONPhrase); ps >= 0 {
		steps = []int{ps, last}
	}
	p.Report(trace.Finding{
		Steps:      steps,
		Quote:      quote,
		Confidence: 0.7,
		Explanation: fmt.Sprintf("The task says %q, and the agent's closing message at step %d is prose (%d words outside any JSON answer).",
			spec.FinalJSONPhrase, last, words),
	})
}

// proseAround returns what a message holds before and after one JSON
// object (the first '{' to the last '}', when that parses), code fences
// left out: the text the task did not allow. A message with no such object
// is all before, and hasJSON is false.
func proseAround(text string) (before, after string, hasJSON bool) {
	before = text
	open, end := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}')
	if open >= 0 && end > open && json.Valid([]byte(text[open:end+1])) {
		before, after, hasJSON = text[:open], text[end+1:], true
	}
	unfence := func(s string) string {
		s = strings.TrimSpace(s)
		s = strings.TrimSpace(strings.TrimSuffix(s, "```json"))
		return strings.TrimSpace(strings.Trim(s, "`"))
	}
	return unfence(before), unfence(after), hasJSON
}
