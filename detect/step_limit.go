package detect

import "github.com/faultline/faultline/internal/text"

// StepLimit finds FM-1.5 where the run ran into a turn or step cap.
var StepLimit = &Detector{
	Name: "step-limit",
	Mode: "FM-1.5",
	Doc: `The run ran into a turn, step or iteration cap of its harness.
It reads the run's error events, harness and system events and failed tool results (the first line
of long ones) for a harness saying a maximum was reached: "Reached max steps (20)", "maximum number
of turns exceeded", "recursion limit reached", Inspect's "message limit reached". All such steps are one finding; confidence 0.85. Runs
in which the agent never produced a step are left to empty-model-response.
Blind spots: caps the harness enforces without saying so (the run simply stops; see
harness-retry-loop for Zero's retry cap), caps announced in other words, and an agent's own remark
that it is running out of steps, which is not a harness event.`,
	Run: runStepLimit,
}

var stepCapText = text.Regexp(`(?i)\b(?:reached|hit|exceeded)\b[^\n]{0,30}\bmax(?:imum)?\b[^\n]{0,25}\b(?:turns?|steps?|iterations?|rounds?|auto-?repl(?:y|ies)|tool calls)\b|\bmax(?:imum)?[ _-]?(?:number of )?(?:turns?|steps?|iterations?|rounds?)\b[^\n]{0,20}\b(?:reached|exceeded|hit)\b|\b(?:turn|step|iteration|round|recursion|message) limit\b[^\n]{0,20}\b(?:reached|exceeded|hit)\b`)

func runStepLimit(p *Pass) {
	if !p.facts.agentActed() {
		return
	}
	reportHarnessText(p, matchText(stepCapText(), nil, "max", "limit"), 0.85, 0.85, "The run hit a turn or step cap")
}
