package detect

import (
	"fmt"

	"github.com/faultline/faultline/trace"
	"github.com/faultline/faultline/trace/toolcall"
)

// ForbiddenCommand finds FM-1.1 where the agent runs a command or tool its task forbids.
var ForbiddenCommand = &Detector{
	Name: "forbidden-command",
	Mode: "FM-1.1",
	Doc: `The agent runs a command or calls a tool that its task explicitly forbids.
Forbidden commands are read from the task and the harness's instructions: "MUST NOT / NEVER / do
not run, execute, use, call or invoke" followed by a command in backticks, or by a name and the word
command, tool, binary or cli ("never use the curl command"). A call breaks the rule when its tool
has that name, or when its command line runs it as a command (at the start, after a separator, in
a "bash -c" script or after sudo and the like; not merely mentioning it). One finding per forbidden command
citing the calls, quoting the prohibition when a step holds it; confidence 0.9.
Blind spots: prohibitions in other words ("read-only: change nothing"), of a class of commands
("anything that writes"), or of arguments rather than commands; commands run inside a script the
agent wrote are not seen; a failed call still counts, since the attempt itself disobeys.`,
	Run: runForbiddenCommand,
}

func runForbiddenCommand(p *Pass) {
	t, f := p.Trace, p.facts
	if len(f.task().Banned) == 0 || !f.agentActed() {
		return
	}
	for _, ban := range f.task().Banned {
		var calls []int
		for i := range t.Steps {
			s := &t.Steps[i]
			if s.Kind == trace.KindToolCall && (s.Tool == ban.Name || shortTool(s.Tool) == ban.Name || toolcall.Runs(f.command(i), ban.Name)) {
				calls = append(calls, i)
			}
		}
		if len(calls) == 0 {
			continue
		}
		steps, quote := citeRequirement(f, ban.Phrase, -1)
		if quote == "" {
			quote = ban.Name
		}
		p.Report(trace.Finding{
			Steps:       append(steps, calls...),
			Quote:       quote,
			Confidence:  0.9,
			Explanation: fmt.Sprintf("The task forbids running %s, and the agent ran it %s, first at step %d.", ban.Name, times(len(calls)), calls[0]),
		})
	}
}
