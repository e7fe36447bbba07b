package detect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/faultline/faultline/trace"
)

// EmptyModelResponse finds SYS-1: the model was prompted and produced nothing.
var EmptyModelResponse = &Detector{
	Name: "empty-model-response",
	Mode: "SYS-1",
	Doc: `The model was prompted and produced nothing: no message, reasoning or tool call.
Two shapes are reported. A run in which the agent never produced a single step although it was
prompted (a request, harness retries) is one finding citing every prompt, confidence 0.95 when it
was prompted more than once, 0.8 when once (a log cut short after the first prompt looks the same).
In a run where the agent did act, a turn that came back empty shows as a prompt that follows another
prompt with nothing from the agent in between, as a harness retry nudge right after a tool result
(the model was sent the result and said nothing, so the turn ended), or, in multi-agent chats, as an
agent's message with no text that the next message follows directly; those steps are one finding at
confidence 0.6.
How this divides traces with harness-retry-loop (FM-1.5): a model that never answered is an
infrastructure failure and only this detector reports it; every detector of agent behaviour stays
silent on such a run. A model that answered but never produced its required output is the agent's
failure (harness-retry-loop, missing-answer), and its empty turns are reported here too.
A run that ends on a turn the model never answered is reported the same way when its format logs
turns (Codex's turn_context, marked as an empty_turn step at ingest): the run stopped on the model's
silence, and missing-answer (FM-3.1) leaves such a run alone.
Blind spots: a turn that produced only whitespace or an unparsed event is not told apart from a real
step; an empty response after a tool result that a person, not the harness, answered is not
reported, since a user may interrupt a turn; in formats that do not log turns, the last turn of a
run, which nothing follows, is never seen to be empty.`,
	Run:      runEmptyModelResponse,
	Finished: true,
}

func runEmptyModelResponse(p *Pass) {
	t := p.Trace
	var prompts []int
	for i := range t.Steps {
		if isPrompt(&t.Steps[i]) {
			prompts = append(prompts, i)
		}
	}
	if !p.facts.agentActed() {
		if len(prompts) == 0 {
			return
		}
		conf := 0.8
		if len(prompts) > 1 {
			conf = 0.95
		}
		last := &t.Steps[prompts[len(prompts)-1]]
		p.Report(trace.Finding{
			Steps:      prompts,
			Quote:      firstLine(last.Text, 160),
			Confidence: conf,
			Explanation: fmt.Sprintf("The model was prompted %s and never produced a message, reasoning or tool call; the run holds no agent behaviour to judge.",
				times(len(prompts))),
		})
		return
	}
	var silent []int
	for _, i := range prompts {
		if before := lastMove(t, i); before >= 0 && (isPrompt(&t.Steps[before]) ||
			(t.Steps[before].Kind == trace.KindToolResult && t.Steps[i].Type == trace.TypeRetryNudge)) {
			silent = append(silent, i)
		}
	}
	// Chats keep a turn that came back empty as a message with no text,
	// followed by the next message; an empty thought followed by the
	// harness's record of a tool it chose (OpenManus) is no empty turn.
	for i := range t.Steps {
		st := &t.Steps[i]
		if !trace.ByAgent(st) || st.Kind != trace.KindMessage || st.Tool != "" || strings.TrimSpace(st.Text) != "" {
			continue
		}
		if i+1 == len(t.Steps) || t.Steps[i+1].Kind == trace.KindMessage || t.Steps[i+1].Kind == trace.KindFinal {
			silent = append(silent, i)
		}
	}
	slices.Sort(silent)
	if end := endedSilent(t); end >= 0 {
		silent = append(silent, end)
	}
	if len(silent) == 0 {
		return
	}
	where := "step " + joinInts(silent)
	if len(silent) > 1 {
		where = "steps " + joinInts(silent)
	}
	explanation := fmt.Sprintf("The model was prompted again at %s after a turn in which it produced nothing at all: no message, reasoning or tool call.", where)
	conf := 0.6
	if last := silent[len(silent)-1]; t.Steps[last].Type == trace.TypeEmptyTurn {
		// The format logged the turn itself: its silence is a record, not an
		// inference.
		conf = 0.8
		explanation = fmt.Sprintf("The model's turns came back empty (no message, reasoning or tool call) at %s; the last one ended the run, so the run stopped on the model's silence, not because the agent chose to stop.", where)
	}
	p.Report(trace.Finding{
		Steps:       silent,
		Quote:       firstLine(t.Steps[silent[0]].Text, 160),
		Confidence:  conf,
		Explanation: explanation,
	})
}

// endedSilent returns the step that records a last turn the model never
// answered (trace.TypeEmptyTurn) when nothing of the agent follows it, or -1.
func endedSilent(t *trace.Trace) int {
	for i := len(t.Steps) - 1; i >= 0; i-- {
		s := &t.Steps[i]
		if s.Type == trace.TypeEmptyTurn {
			return i
		}
		if trace.ByAgent(s) || isPrompt(s) || s.Kind == trace.KindToolResult {
			return -1
		}
	}
	return -1
}

// lastMove returns the last step before i that moved the conversation on (a
// step of the agent, a prompt or a tool result, not a harness event), or -1.
func lastMove(t *trace.Trace, i int) int {
	for j := i - 1; j >= 0; j-- {
		if s := &t.Steps[j]; trace.ByAgent(s) || isPrompt(s) || s.Kind == trace.KindToolResult {
			return j
		}
	}
	return -1
}

// firstLine returns the first non-empty line of s, clipped to n bytes, as a
// quote.
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	line, _, _ := strings.Cut(s, "\n")
	return quoteFrom(line, n)
}
