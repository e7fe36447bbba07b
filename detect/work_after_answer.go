package detect

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// WorkAfterAnswer finds FM-1.5 where the agent keeps working after its answer is written and checked.
var WorkAfterAnswer = &Detector{
	Name: "work-after-answer",
	Mode: "FM-1.5",
	Doc: `The agent keeps calling tools after its required output was written and checked.
The task must name an output file (the prompt says "Write your diagnosis to: …/agent_output.json").
The answer counts as done at the last successful write of that file, or, when the task also names a
validator ("validate json using jq"), at the first validation of that last version that passed.
Five or more tool calls after that point, other than plan updates and further reads of the file, are
reported as one finding citing the point and the calls; confidence 0.6 plus 0.05 for each call
beyond five, up to 0.9.
Blind spots: runs that give their answer only as a final message never reach a "done" point here;
calls after the answer that rewrite it (a revision) move the point and are not counted; an agent
that keeps working on purpose (a follow-up task in the same session) is reported anyway.`,
	Run: runWorkAfterAnswer,
}

func runWorkAfterAnswer(p *Pass) {
	t, f := p.Trace, p.facts
	if !f.agentActed() {
		return
	}
	a := f.answerFile()
	if a == nil {
		return
	}
	done := f.lastGoodWrite(a)
	if done < 0 {
		return
	}
	if f.task().Validator != "" {
		v := f.passedValidationAfter(a, done)
		if v < 0 {
			return
		}
		done = v
	}
	var after []int
	for i := done + 1; i < len(t.Steps); i++ {
		s := &t.Steps[i]
		if s.Kind == trace.KindToolCall && !isPlanTool(s.Tool) && !touches(s, a.File) {
			after = append(after, i)
		}
	}
	if len(after) < 5 {
		return
	}
	p.Report(trace.Finding{
		Steps:      append([]int{done}, after...),
		Quote:      a.File,
		Confidence: min(0.9, 0.6+0.05*float64(len(after)-5)),
		Explanation: fmt.Sprintf("%s was written and checked by step %d, and the agent went on for %s instead of stopping.",
			a.File, done, text.Plural(len(after), "more tool call", "more tool calls")),
	})
}

// touches reports whether a step's arguments name a file.
func touches(s *trace.Step, file string) bool {
	return s.Kind == trace.KindToolCall && file != "" && strings.Contains(s.Args, file)
}
