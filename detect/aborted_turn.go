package detect

import (
	"fmt"

	"github.com/faultline/faultline/trace"
)

// AbortedTurn finds FM-3.1 where the agent's turn was aborted before it finished.
var AbortedTurn = &Detector{
	Name: "aborted-turn",
	Mode: "FM-3.1",
	Doc: `A turn of the agent was aborted before the run's objective was met.
It reports error steps of type "turn_aborted" (Codex's turn_aborted event, recorded at ingest).
Not reported when the agent never produced a step (empty-model-response claims that run), or when
the task's output file had already been written, and validated when the task asks for it, before the
abort. Confidence 0.8 when nothing of the agent follows the abort, 0.55 when the run went on.
Blind spots: why the turn was aborted (a user's interrupt, a harness timeout, a crash) is not always
recorded; runs killed without an abort event look like runs that stopped (see missing-answer and
early-answer).`,
	Run: runAbortedTurn,
}

func runAbortedTurn(p *Pass) {
	t, f := p.Trace, p.facts
	if !f.agentActed() {
		return
	}
	done := -1 // where the required output was complete
	if a := f.answerFile(); a != nil {
		done = f.lastGoodWrite(a)
		if done >= 0 && f.task().Validator != "" {
			done = f.passedValidationAfter(a, done)
		}
	}
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Kind != trace.KindError || s.Type != "turn_aborted" || (done >= 0 && done < i) {
			continue
		}
		conf := 0.8
		if lastAgentStep(t) > i {
			conf = 0.55
		}
		p.Report(trace.Finding{
			Steps:       []int{i},
			Quote:       firstLine(s.Text, 120),
			Confidence:  conf,
			Explanation: fmt.Sprintf("The agent's turn was aborted at step %d before the run had produced its answer.", i),
		})
	}
}
