package detect

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// HarnessRetryLoop finds FM-1.5 where the harness has to keep the agent going.
var HarnessRetryLoop = &Detector{
	Name: "harness-retry-loop",
	Mode: "FM-1.5",
	Doc: `The harness re-prompts the agent because its required output never appeared.
It counts harness retry messages (ITBench Zero's "I don't see agent_output.json ..."), as marked at
ingest, that answer a turn the agent ended by speaking (a message, a final answer, reasoning) with
the output still missing: the agent stopped as if done, not knowing what ends the task. Retries that
follow a turn in which the model produced nothing (right after a prompt or a tool result) are
empty-model-response's (SYS-1), not this mode. Two or more retries are reported; a single one only
when the agent did nothing after it.
Confidence is 0.7, 0.85 with three retries or more, plus 0.1 when the run still ends without the
agent acting on the last retry; the explanation says how many retries went without a single tool
call in between.
A run in which the agent never produced a step at all is not reported: retries around a model that
never answered are an infrastructure failure (empty-model-response, SYS-1), not the agent ignoring a
stop condition. A model that answered but never wrote its output is reported here, and its missing
output by missing-answer (FM-3.1).
Blind spots: harnesses whose retry wording the ingest format does not recognise, runs that stop on a
step cap without any retry message (see step-limit), and a model whose turns came back empty between
retries although it meant to stop (it says nothing, so nothing shows it).`,
	Run: runHarnessRetryLoop,
}

func runHarnessRetryLoop(p *Pass) {
	t := p.Trace
	// Only the retries that answer a turn the agent ended by speaking count:
	// a retry after a turn that came back empty (right after a prompt or a
	// tool result) re-prompts a silent model, which is empty-model-response's.
	var nudges []int
	for i := range t.Steps {
		if t.Steps[i].Type != trace.TypeRetryNudge {
			continue
		}
		if before := lastMove(t, i); before >= 0 && spoke(&t.Steps[before]) {
			nudges = append(nudges, i)
		}
	}
	if len(nudges) == 0 || !p.facts.agentActed() {
		return
	}
	last := nudges[len(nudges)-1]
	actedAfterLast := false
	for i := last + 1; i < len(t.Steps); i++ {
		if t.Steps[i].Role == trace.RoleAssistant {
			actedAfterLast = true
			break
		}
	}
	if len(nudges) < 2 && actedAfterLast {
		return
	}
	// How many retries the agent answered without calling a single tool.
	idle := 0
	for k, n := range nudges {
		end := len(t.Steps)
		if k+1 < len(nudges) {
			end = nudges[k+1]
		}
		called := false
		for i := n + 1; i < end; i++ {
			if t.Steps[i].Kind == trace.KindToolCall {
				called = true
				break
			}
		}
		if !called {
			idle++
		}
	}
	confidence := 0.7
	if len(nudges) >= 3 {
		confidence = 0.85
	}
	if !actedAfterLast {
		confidence += 0.1
	}
	first := &t.Steps[nudges[0]]
	quote, _, _ := strings.Cut(strings.TrimSpace(first.Text), "\n")
	ending := "the agent acted after the last one"
	if !actedAfterLast {
		ending = "the run ended without the agent acting on the last one"
	}
	answered := "the agent called tools after each of them"
	if idle > 0 {
		answered = fmt.Sprintf("%s answered without a single tool call", text.Plural(idle, "retry was", "retries were"))
	}
	p.Report(trace.Finding{
		Steps:      nudges,
		Quote:      quoteFrom(quote, 160),
		Confidence: confidence,
		Explanation: fmt.Sprintf("The harness had to re-prompt the agent %s because its required output was missing; %s, and %s.",
			times(len(nudges)), answered, ending),
	})
}

// spoke reports whether a step is the agent saying something: a message, a
// final answer or reasoning, as opposed to a tool call or silence.
func spoke(s *trace.Step) bool {
	return trace.ByAgent(s) && (s.Kind == trace.KindMessage || s.Kind == trace.KindFinal || s.Kind == trace.KindReasoning)
}
