package detect

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/trace"
)

// RepeatedKnownError finds FM-1.4 where the agent walks back into a failure it had already met and got past.
var RepeatedKnownError = &Detector{
	Name: "repeated-known-error",
	Mode: "FM-1.4",
	Doc: `The agent makes a call fail the way it had already failed, long after it had found its way around it.
Failures are grouped by tool and by the shape of their error output (its first 24 and last 32 bytes
with numbers masked: "sandbox-exec: execvp() o…ailed: No such file or directory"). A recurrence is
reported when it comes at least 8 tool calls after the previous failure of the same shape and the
same tool succeeded in between: the run had learnt what fails and then acted as if it had not. Each
error shape is one finding citing its first occurrence, the last one before the gap, and every
recurrence after it; confidence 0.6, 0.7 with two recurrences or more. Retries in quick succession
are not this mode (see stalled-loop and repeated-tool-call).
Blind spots: other forms of forgetting (re-deriving an established fact, contradicting an observed
value in prose) need reading the reasoning and are left to the judge; an error whose output varies
in more than numbers is not recognised as the same failure.`,
	Run: runRepeatedKnownError,
}

// minRelapseGap is how many tool calls must separate two failures of the
// same shape for the second to be a relapse rather than a retry.
const minRelapseGap = 8

func runRepeatedKnownError(p *Pass) {
	t, f := p.Trace, p.facts
	type occurrence struct{ step, ordinal int }
	failures := map[string][]occurrence{}
	var order []string
	successes := map[string][]int{} // tool → ordinals of successful calls
	ordinal := 0
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Kind != trace.KindToolCall || isPlanTool(s.Tool) {
			continue
		}
		ordinal++
		if f.succeeded(i) {
			successes[s.Tool] = append(successes[s.Tool], ordinal)
		}
		if !f.failed(i) {
			continue
		}
		out := f.output(i)
		if len(out) < 8 {
			continue
		}
		sig := s.Tool + "\x00" + errorShape(out)
		if failures[sig] == nil {
			order = append(order, sig)
		}
		failures[sig] = append(failures[sig], occurrence{i, ordinal})
	}
	succeededBetween := func(tool string, a, b int) bool {
		for _, o := range successes[tool] {
			if o > a && o < b {
				return true
			}
		}
		return false
	}
	for _, sig := range order {
		occ := failures[sig]
		var steps []int
		relapses := 0
		for k := 1; k < len(occ); k++ {
			prev, cur := occ[k-1], occ[k]
			tool := t.Steps[cur.step].Tool
			if relapses == 0 && (cur.ordinal-prev.ordinal < minRelapseGap || !succeededBetween(tool, prev.ordinal, cur.ordinal)) {
				continue
			}
			if relapses == 0 {
				steps = append(steps, occ[0].step)
				if prev.step != occ[0].step {
					steps = append(steps, prev.step)
				}
			}
			relapses++
			steps = append(steps, cur.step)
		}
		if relapses == 0 {
			continue
		}
		relapse := steps[len(steps)-relapses]
		conf, again := 0.6, "again"
		if relapses > 1 {
			conf, again = 0.7, fmt.Sprintf("again, %d times", relapses)
		}
		p.Report(trace.Finding{
			Steps:      append(steps, *t.Steps[relapse].Pair),
			Quote:      firstLine(f.output(relapse), 120),
			Confidence: conf,
			Explanation: fmt.Sprintf("%s failed this way %s, first at step %d. The same tool then succeeded, and %d or more calls later (from step %d) the agent made it fail the same way %s, as if it had not learnt what fails.",
				t.Steps[occ[0].step].Tool, times(len(occ)), occ[0].step, minRelapseGap, relapse, again),
		})
	}
}

// errorShape reduces an error output to its shape: its first 24 and last 32
// bytes, numbers masked. Error messages put what failed at the start and why
// at the end, with the input (a command, a path) in between, so the same
// failure on different inputs compares equal.
func errorShape(out string) string {
	out = strings.TrimSpace(out)
	head, tail := out, out
	if len(head) > 24 {
		head = head[:24]
	}
	if len(tail) > 32 {
		tail = tail[len(tail)-32:]
	}
	return maskDigits(head + "\x00" + tail)
}

// maskDigits replaces every run of digits with "#".
func maskDigits(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	inRun := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' {
			if !inRun {
				b.WriteByte('#')
			}
			inRun = true
			continue
		}
		inRun = false
		b.WriteByte(c)
	}
	return b.String()
}
