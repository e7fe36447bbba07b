package detect

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
	"github.com/faultline/faultline/trace/toolcall"
)

// UnbackedClaim finds FM-3.3 where the agent's final message claims work the trace does not show.
var UnbackedClaim = &Detector{
	Name: "unbacked-claim",
	Mode: "FM-3.3",
	Doc: `The agent's final message claims its output was written or validated, and the trace shows otherwise.
It reads the sentences of the final message (the last message of the agent) that name the task's
output file. A claim that the file was written, created or saved is unbacked when no step shows the
file exists (no successful write or read of it); a claim that it was validated, verified or is valid
is unbacked when no check of its last version passed (the task's validator, or jq or json.tool when
the task names none). Negated sentences ("could not write …") are not claims.
One finding per kind of claim; confidence 0.9 for a write, 0.85 for a validation.
Blind spots: claims that do not name the file ("the diagnosis is complete"), claims about the
content (that a root cause was confirmed) and claims in other languages are not read.`,
	Run:      runUnbackedClaim,
	Finished: true,
}

var (
	writeClaim    = text.Regexp(`(?i)\b(?:written|wrote|created|saved|generated|produced|stored)\b`)
	validityWords = text.Regexp(`(?i)\b(?:validated|verified|is valid|valid json|passes|parses|checked)\b`)
	negation      = text.Regexp(`(?i)\b(?:not|unable|failed|fails|cannot|could ?n[o']t|didn'?t|won'?t|no)\b`)
)

func runUnbackedClaim(p *Pass) {
	t, f := p.Trace, p.facts
	a := f.answerFile()
	if !f.agentActed() || a == nil {
		return
	}
	if at, s := f.claim(a.File, writeClaim()); at >= 0 && !a.Exists {
		p.Report(trace.Finding{
			Steps:       []int{at},
			Quote:       s,
			Confidence:  0.9,
			Explanation: fmt.Sprintf("The final message says %s was written, but no step of the run shows it exists: every write of it failed or none was made.", a.File),
		})
	}
	at, s := f.validityClaim(a.File)
	if at < 0 {
		return
	}
	last := f.lastGoodWrite(a)
	validator := f.task().Validator
	passed := false
	for i := max(last, 0); i < len(t.Steps) && !passed; i++ {
		st := &t.Steps[i]
		if st.Kind != trace.KindToolCall || !strings.Contains(st.Args, a.File) || !f.validationOK(i) {
			continue
		}
		cmd := f.command(i)
		if validator != "" {
			passed = toolcall.Runs(cmd, validator)
		} else {
			passed = toolcall.Runs(cmd, "jq") || strings.Contains(cmd, "json.tool")
		}
	}
	if passed || !a.Exists {
		return
	}
	p.Report(trace.Finding{
		Steps:       []int{at},
		Quote:       s,
		Confidence:  0.85,
		Explanation: fmt.Sprintf("The final message says %s was checked, but no check of its last version passed in the run.", a.File),
	})
}

// claim returns the agent's final message and the first sentence in it that
// names file and matches re without a negation, or -1.
func (f *facts) claim(file string, re *regexp.Regexp) (int, string) {
	at := lastAgentMessage(f.t)
	if at < 0 {
		return -1, ""
	}
	for _, s := range sentences(f.t.Steps[at].Text) {
		if strings.Contains(s, file) && re.MatchString(s) && !negation().MatchString(s) {
			return at, s
		}
	}
	return -1, ""
}

// validityClaim is the agent's final claim that file is valid or validated.
func (f *facts) validityClaim(file string) (int, string) {
	return f.claim(file, validityWords())
}

// lastAgentMessage returns the agent's final answer, or its last message
// when the run has no final answer, or -1.
func lastAgentMessage(t *trace.Trace) int {
	for i := len(t.Steps) - 1; i >= 0; i-- {
		s := &t.Steps[i]
		if trace.ByAgent(s) && (s.Kind == trace.KindFinal || s.Kind == trace.KindMessage) {
			return i
		}
	}
	return -1
}
