package detect

import (
	"fmt"

	"github.com/faultline/faultline/trace"
)

// SkippedValidation finds FM-3.2 where a check the task requires was never run on the final output.
var SkippedValidation = &Detector{
	Name: "skipped-validation",
	Mode: "FM-3.2",
	Doc: `The task requires checking the output with a named validator, and the final output was never checked.
The task must name both an output file and a validator ("You must validate json using jq"; "check
that the file parses with jq"). After the last successful write of the file, no call ran the
validator on it. Confidence 0.85 when the validator never ran on the file at all, 0.6 when it ran
only on an earlier version (the file was changed after its last check). A check that ran and failed
is not this mode but FM-3.3 (ignored-validation-failure); an output never written is FM-3.1
(missing-answer).
Blind spots: validators other than jq, jsonlint and python's json.tool are not recognised in the
prompt; a check done by other means (reading the file back with cat, a python json.load) does not
count, since the task named its validator; a write faultline does not recognise leaves the last
recognised write as the reference point.`,
	Run:      runSkippedValidation,
	Finished: true,
}

func runSkippedValidation(p *Pass) {
	f := p.facts
	a := f.answerFile()
	if !f.agentActed() || a == nil || f.task().Validator == "" {
		return
	}
	last := f.lastGoodWrite(a)
	if last < 0 {
		return
	}
	earlier := 0
	for _, v := range a.Validations {
		if v >= last {
			return
		}
		earlier++
	}
	v := f.task().Validator
	conf, how := 0.85, fmt.Sprintf("%s was never run on it (last written at step %d)", v, last)
	if earlier > 0 {
		conf, how = 0.6, fmt.Sprintf("%s checked an earlier version only: the file was changed at step %d and not checked again", v, last)
	}
	steps, quote := citeRequirement(f, f.task().ValidatorPhrase, last)
	if quote == "" {
		quote = a.File
	}
	p.Report(trace.Finding{
		Steps:       steps,
		Quote:       quote,
		Confidence:  conf,
		Explanation: fmt.Sprintf("The task requires checking %s with %s; %s.", a.File, v, how),
	})
}
