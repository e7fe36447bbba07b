package detect

import (
	"fmt"

	"github.com/faultline/faultline/trace"
)

// StalledLoop finds FM-1.5 where a long run of calls brings nothing new.
var StalledLoop = &Detector{
	Name: "stalled-loop",
	Mode: "FM-1.5",
	Doc: `A long run of consecutive tool calls brings no new information.
A call brings nothing new when it fails, or when it repeats an earlier call (same normalised
arguments, see repeated-tool-call) and gets the same output. Five or more such calls in a row (plan
updates skipped, any other call ends the run) are one finding citing them all; confidence 0.6 plus
0.05 for each call beyond five, up to 0.85. The loop may end in a success: that it took this long is
the finding.
Blind spots: a loop of calls that each return something slightly different (a timestamp, a counter)
looks like progress; a long run of distinct queries that all find nothing is progress too and is not
reported.`,
	Run: runStalledLoop,
}

func runStalledLoop(p *Pass) {
	t, f := p.Trace, p.facts
	if !f.agentActed() {
		return
	}
	earlier := map[uint64][]int{} // request → calls that made it
	var run []int
	flush := func() {
		if len(run) >= 5 {
			p.Report(trace.Finding{
				Steps:      append([]int(nil), run...),
				Quote:      t.Steps[run[0]].Tool,
				Confidence: min(0.85, 0.6+0.05*float64(len(run)-5)),
				Explanation: fmt.Sprintf("%d tool calls in a row (steps %d to %d) each failed or repeated an earlier call's output; the agent kept going without learning anything new.",
					len(run), run[0], run[len(run)-1]),
			})
		}
		run = run[:0]
	}
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Kind != trace.KindToolCall || isPlanTool(s.Tool) {
			continue
		}
		if t.Result(i) == nil {
			flush() // nothing to judge the call by
			continue
		}
		stale := f.failed(i)
		if !stale {
			k := f.callKey(i)
			for _, e := range earlier[k] {
				if !f.failed(e) && f.outputKey(e) == f.outputKey(i) {
					stale = true
					break
				}
			}
			earlier[k] = append(earlier[k], i)
		}
		if stale {
			run = append(run, i)
		} else {
			flush()
		}
	}
	flush()
}
