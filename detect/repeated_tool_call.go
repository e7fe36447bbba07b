package detect

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
	"github.com/faultline/faultline/trace/toolcall"
)

// RepeatedToolCall finds FM-1.3 step repetition in its plainest form.
var RepeatedToolCall = &Detector{
	Name: "repeated-tool-call",
	Mode: "FM-1.3",
	Doc: `The same tool is called again with the same or near-identical arguments and returns the same output.
Arguments are normalised (JSON top-level keys sorted and values compacted, a shell script unwrapped
from "bash -lc", timeouts dropped, whitespace collapsed); outputs are compared with runs of
whitespace collapsed. Calls whose arguments differ only in numbers (a changed limit or line count)
and that return the same non-empty output are near-identical. Each group of repeats is one finding
citing every call; plan updates are left to repeated-plan-update. Confidence starts at 0.6 for one
repeat and grows by 0.1 a repeat up to 0.95; near-identical groups take 0.1 less.
Re-checks that can be normal work get lower confidence and say so: a repeat after a call that
changes state (kubectl apply/patch/delete/scale/rollout, helm, a file written, a patch applied) is
multiplied by 0.6, and a re-read of something that varies over time (metrics, status, top, events,
health) takes 0.15 less. The study behind MAST found repetition in most successful runs, so a
finding here weighs little on its own.
Blind spots: repeats whose output changed are never reported, even when the change is only a
timestamp; a deliberate re-check whose output happens to be identical is still reported (with the
lower confidence above), since the trace alone cannot tell that nothing was expected to change.`,
	Run: runRepeatedToolCall,
}

var (
	// changesSystem matches commands that change the system under study.
	changesSystem = text.Regexp(`\b(?:kubectl|oc)\s+(?:apply|patch|delete|scale|rollout|edit|create|replace|set|label|annotate|drain|cordon)\b|\bhelm\s+(?:install|upgrade|rollback|uninstall)\b|\b(?:systemctl|service)\s+\S+\s+(?:restart|start|stop)\b`)
	// variesOverTime matches reads of values that change as time passes.
	variesOverTime = text.Regexp(`(?i)metric|\bstatus\b|\btop\b|\bevents?\b|health|\bwatch\b|uptime|latency|\bps\b`)
)

func runRepeatedToolCall(p *Pass) {
	t, f := p.Trace, p.facts
	// Calls are grouped by their request with numbers masked, and only the
	// outputs of calls in a group of two or more are compared.
	byRequest := map[uint64][]int{}
	var order []uint64
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Kind != trace.KindToolCall || isPlanTool(s.Tool) || t.Result(i) == nil {
			continue
		}
		k := f.nearKey(i)
		if byRequest[k] == nil {
			order = append(order, k)
		}
		byRequest[k] = append(byRequest[k], i)
	}
	for _, k := range order {
		calls := byRequest[k]
		if len(calls) < 2 {
			continue
		}
		byOutput := map[uint64][]int{}
		var outputs []uint64
		for _, c := range calls {
			o := f.outputKey(c)
			if byOutput[o] == nil {
				outputs = append(outputs, o)
			}
			byOutput[o] = append(byOutput[o], c)
		}
		for _, o := range outputs {
			reportGroup(p, byOutput[o])
		}
	}
}

// reportGroup reports a group of calls with the same masked request and the
// same output: as one near-identical repetition when their requests differ
// and they found something, else as the exact repetitions within it.
func reportGroup(p *Pass, calls []int) {
	f := p.facts
	if len(calls) < 2 {
		return
	}
	byExact := map[uint64][]int{}
	var keys []uint64
	for _, c := range calls {
		e := f.callKey(c)
		if byExact[e] == nil {
			keys = append(keys, e)
		}
		byExact[e] = append(byExact[e], c)
	}
	if len(keys) > 1 && strings.TrimSpace(f.output(calls[0])) != "" {
		reportRepeats(p, calls, true)
		return
	}
	// Different requests that all found nothing are not repetition; only
	// their exact repeats are.
	for _, e := range keys {
		if len(byExact[e]) > 1 {
			reportRepeats(p, byExact[e], false)
		}
	}
}

// mayChangeState reports whether a command changes what a later read may
// see: it writes a file, or changes the system (kubectl apply and the like,
// tested for only when one of the commands appears at all).
func mayChangeState(cmd string) bool {
	if len(toolcall.WrittenFiles(cmd)) > 0 {
		return true
	}
	return containsAny(cmd, []string{"kubectl", "oc ", "helm", "systemctl", "service "}) && changesSystem().MatchString(cmd)
}

func reportRepeats(p *Pass, calls []int, near bool) {
	t, f := p.Trace, p.facts
	first := &t.Steps[calls[0]]
	quote := quoteFrom(first.Args, 160)
	if quote == "" || quote == "{}" {
		quote = first.Tool
	}
	repeats := len(calls) - 1
	conf := min(0.95, 0.6+0.1*float64(repeats-1))
	how := "with the same arguments"
	if near {
		conf -= 0.1
		how = "with arguments that differ only in numbers"
	}
	var notes []string
	for i := calls[0] + 1; i < calls[len(calls)-1]; i++ {
		s := &t.Steps[i]
		if s.Kind == trace.KindToolCall && f.succeeded(i) && mayChangeState(f.command(i)) {
			conf *= 0.6
			notes = append(notes, fmt.Sprintf("step %d may have changed what the call reads, so this can be a legitimate re-check", i))
			break
		}
	}
	if variesOverTime().MatchString(first.Tool + " " + f.command(calls[0])) {
		conf -= 0.15
		notes = append(notes, "it reads a value that can vary over time, and re-reading one is ordinary work")
	}
	added := "the repeat added"
	if repeats > 1 {
		added = "the repeats added"
	}
	explanation := fmt.Sprintf("%s was called %s %s and returned the same output each time (first at step %d); %s no information.",
		first.Tool, times(len(calls)), how, calls[0], added)
	if len(notes) > 0 {
		explanation += " But " + strings.Join(notes, ", and ") + "; repetition like this is common in successful runs."
	}
	p.Report(trace.Finding{Steps: calls, Quote: quote, Confidence: conf, Explanation: explanation})
}
