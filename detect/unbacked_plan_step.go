package detect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// UnbackedPlanStep finds FM-2.6 where a plan step is marked done that no action carried out.
var UnbackedPlanStep = &Detector{
	Name: "unbacked-plan-step",
	Mode: "FM-2.6",
	Doc: `A plan step is marked completed although no call of the run did what it names.
It reads plan updates (see repeated-plan-update). When a step turns "completed" (or is added
completed), its text is checked for something a call must have touched: a tool (one the run calls,
or a snake_case name introduced as a tool: "with get_trace_error_tree"), a command (jq, grep,
python, kubectl, curl, awk, sed) or a file name. If no tool call up to that update used the tool,
ran the command or named the file, the step is unbacked. Steps that name none of these ("analyse the
alerts", "build the causal chain") are thinking steps and are not judged. One finding per unbacked
step citing the update; confidence 0.7.
Blind spots: a step backed by a failed call counts as backed (the attempt was made); a step naming a
data source in words ("read the logs") is not matched to the call that read them; plans kept in
prose are not read.`,
	Run: runUnbackedPlanStep,
}

var planCommand = text.Regexp(`(?i)\b(jq|grep|python3?|kubectl|curl|awk|sed)\b`)

func runUnbackedPlanStep(p *Pass) {
	t, f := p.Trace, p.facts
	if !f.agentActed() {
		return
	}
	vocab := f.toolVocabulary()
	done := map[string]bool{}
	for _, u := range f.planUpdates() {
		for _, item := range u.Items {
			key := trace.NormalizeSpace(item.Text)
			completed := item.Status == "completed" || item.Status == "done"
			if !completed || done[key] {
				done[key] = completed
				continue
			}
			done[key] = true
			names := actionNames(item.Text, vocab)
			if len(names) == 0 || backedBefore(f, u.Step, names) {
				continue
			}
			p.Report(trace.Finding{
				Steps:      []int{u.Step},
				Quote:      quotable(t, []int{u.Step}, item.Text),
				Confidence: 0.7,
				Explanation: fmt.Sprintf("The plan update at step %d marks %q completed, but no call before it used %s.",
					u.Step, item.Text, strings.Join(names, " or ")),
			})
		}
	}
}

// actionNames lists what a plan step's text says a call must touch: tools
// of the run, commands, file names.
func actionNames(text string, vocab map[string]bool) []string {
	var names []string
	for tool := range toolsNamed(text, vocab) {
		names = append(names, tool)
	}
	slices.Sort(names)
	for _, m := range planCommand().FindAllString(text, -1) {
		names = append(names, strings.ToLower(m))
	}
	return append(names, fileNames(text)...)
}

// backedBefore reports whether a tool call before step end used one of the
// names: as its tool, or in its arguments.
func backedBefore(f *facts, end int, names []string) bool {
	for i := 0; i < end; i++ {
		s := &f.t.Steps[i]
		if s.Kind != trace.KindToolCall || isPlanTool(s.Tool) {
			continue
		}
		for _, n := range names {
			if s.Tool == n || shortTool(s.Tool) == n || strings.Contains(strings.ToLower(f.command(i)), n) || strings.Contains(s.Args, n) {
				return true
			}
		}
	}
	return false
}
