package detect

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// RepeatedPlanUpdate finds FM-1.3 where the agent restates a plan that has not moved.
var RepeatedPlanUpdate = &Detector{
	Name: "repeated-plan-update",
	Mode: "FM-1.3",
	Doc: `The agent updates its plan again and again without any step advancing.
It reads the calls of plan tools (update_plan, TodoWrite and kin) and compares consecutive plans by
their steps and statuses (the explanation attached to an update is ignored). A run of identical
consecutive plans is reported when it has three or more updates, or two with no other tool call
between them (the plan restated and nothing done). Confidence is 0.7 for a bare restatement, 0.6 for
three updates with work between them, plus 0.05 for each further update, up to 0.9.
Blind spots: plans kept in messages rather than a plan tool, and plans that change wording without
changing substance, are not compared; a long task whose plan rightly stays put while many calls do
the work of one step is reported once it has three updates.`,
	Run: runRepeatedPlanUpdate,
}

func runRepeatedPlanUpdate(p *Pass) {
	t := p.Trace
	ups := p.facts.planUpdates()
	for start := 0; start < len(ups); {
		end := start + 1
		for end < len(ups) && len(ups[end].Items) > 0 && samePlan(ups[start].Items, ups[end].Items) {
			end++
		}
		run := ups[start:end]
		start = end
		if len(run) < 2 || len(run[0].Items) == 0 {
			continue
		}
		work := 0
		for i := run[0].Step + 1; i < run[len(run)-1].Step; i++ {
			if s := &t.Steps[i]; s.Kind == trace.KindToolCall && !isPlanTool(s.Tool) {
				work++
			}
		}
		var conf float64
		switch {
		case work == 0:
			conf = 0.7 + 0.05*float64(len(run)-2)
		case len(run) >= 3:
			conf = 0.6 + 0.05*float64(len(run)-3)
		default:
			continue
		}
		steps := make([]int, len(run))
		for i, u := range run {
			steps[i] = u.Step
		}
		p.Report(trace.Finding{
			Steps:      steps,
			Quote:      quotable(t, steps[:1], run[0].Items[0].Text),
			Confidence: min(conf, 0.9),
			Explanation: fmt.Sprintf("The plan was written %d times with the same steps and statuses (steps %s), with %s in between: no step advanced.",
				len(run), joinInts(steps), text.Plural(work, "other tool call", "other tool calls")),
		})
	}
}

func samePlan(a, b []planItem) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Status != b[i].Status || trace.NormalizeSpace(a[i].Text) != trace.NormalizeSpace(b[i].Text) {
			return false
		}
	}
	return true
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
