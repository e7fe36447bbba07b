package detect

import (
	"fmt"

	"github.com/faultline/faultline/trace"
)

// IgnoredValidationFailure finds FM-3.3 where a required check of the output failed and the run ended anyway.
var IgnoredValidationFailure = &Detector{
	Name: "ignored-validation-failure",
	Mode: "FM-3.3",
	Doc: `The required check of the output ran, failed, and the run ended without fixing it.
The task must name an output file and a validator (see skipped-validation). The last run of the
validator on the last successful write of the file failed (non-zero exit, an error result, or "parse
error" in its output) and no passing run followed. Confidence 0.85, or 0.95 when the agent's final
message claims the output is valid or validated anyway.
Blind spots: checks the task does not name (tests, a lint) are not followed; a failing check
followed by a rewrite that is never checked again is FM-3.2 (skipped-validation), not this.`,
	Run:      runIgnoredValidationFailure,
	Finished: true,
}

func runIgnoredValidationFailure(p *Pass) {
	t, f := p.Trace, p.facts
	a := f.answerFile()
	if !f.agentActed() || a == nil || f.task().Validator == "" {
		return
	}
	last := f.lastGoodWrite(a)
	if last < 0 || len(a.Validations) == 0 {
		return
	}
	v := a.Validations[len(a.Validations)-1]
	if v < last || f.validationOK(v) {
		return
	}
	steps := []int{v}
	if r := t.Steps[v].Pair; r != nil {
		steps = append(steps, *r)
	}
	conf := 0.85
	claim := ""
	if c, s := f.validityClaim(a.File); c >= 0 {
		conf = 0.95
		steps = append(steps, c)
		claim = fmt.Sprintf(", and the final message still says %q", s)
	}
	p.Report(trace.Finding{
		Steps:       steps,
		Quote:       quotable(t, steps, firstLine(f.output(v), 160), a.File),
		Confidence:  conf,
		Explanation: fmt.Sprintf("%s on %s failed at step %d and the run ended without a passing check%s.", f.task().Validator, a.File, v, claim),
	})
}
