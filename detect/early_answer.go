package detect

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// EarlyAnswer finds FM-3.1 where the run answers without gathering evidence.
var EarlyAnswer = &Detector{
	Name: "early-answer",
	Mode: "FM-3.1",
	Doc: `The run gives its answer, or stops, without gathering evidence, or after a single read of its data.
The answer is the first successful write of the task's output file, or else the agent's final
message. An evidence-gathering call is one before it that succeeded with non-empty output and is not
a plan update, a listing or navigation command (ls, find, tree, pwd, cd, echo, mkdir, touch, which)
or a touch of the output file itself. The run is reported when there was none, confidence 0.85, or
only one while the task itself (Trace.Task, not standing instructions) points the agent at
directories of data to investigate, confidence 0.6: one read of such data (the alerts, say) is a
guess, not an investigation. Only runs that use tools are judged: the trace has a tool call, or the
task names an output file (which takes a tool to write); a conversation-only run has no evidence
calls to count. A run in which the agent never produced a step is left to empty-model-response.
Blind spots: beyond one read, how much evidence a task needs depends on the task and is left to the
judge (a remediation plan may rightly read one file, which is why a task without data directories of
its own is held only to "none"); calls are counted, not weighed, so two trivial reads are enough to
be silent.`,
	Run:      runEarlyAnswer,
	Finished: true,
}

// navigation matches commands that look around rather than read evidence.
var navigation = text.Regexp(`^\s*(?:ls|find|tree|pwd|cd|echo|mkdir|touch|which|whoami|date)\b`)

func runEarlyAnswer(p *Pass) {
	t, f := p.Trace, p.facts
	if !f.agentActed() {
		return
	}
	file := f.task().Output
	answer := -1
	if a := f.answerFile(); a != nil {
		for _, w := range a.Writes {
			if f.succeeded(w) {
				answer = w
				break
			}
		}
	}
	usesTools := file != ""
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Kind == trace.KindToolCall {
			usesTools = true
		}
		if s.Kind == trace.KindFinal && answer < 0 {
			answer = i
		}
	}
	if answer < 0 || !usesTools {
		return
	}
	var evidence []int
	for i := 0; i < answer && len(evidence) < 2; i++ {
		s := &t.Steps[i]
		if s.Kind != trace.KindToolCall || isPlanTool(s.Tool) || !f.succeeded(i) || (file != "" && strings.Contains(s.Args, file)) {
			continue
		}
		if navigation().MatchString(f.command(i)) || strings.TrimSpace(f.output(i)) == "" {
			continue
		}
		evidence = append(evidence, i)
	}
	conf, after := 0.85, "without a single evidence-gathering call"
	switch {
	case len(evidence) == 1 && f.task().DataFromTask:
		conf, after = 0.6, fmt.Sprintf("after a single evidence-gathering call (step %d), though its task gives it a body of data to investigate", evidence[0])
	case len(evidence) > 0:
		return
	}
	s := &t.Steps[answer]
	what := "ended with the agent's last message"
	quote := firstLine(s.Text, 160)
	if s.Kind == trace.KindToolCall {
		what, quote = "wrote its answer", file
	}
	p.Report(trace.Finding{
		Steps:       []int{answer},
		Quote:       quote,
		Confidence:  conf,
		Explanation: fmt.Sprintf("The run %s at step %d %s: it stopped before gathering what the task needs.", what, answer, after),
	})
}
