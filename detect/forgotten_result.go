package detect

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// ForgottenResult finds FM-1.4 where the agent says it has not yet done what it already did.
var ForgottenResult = &Detector{
	Name: "forgotten-result",
	Mode: "FM-1.4",
	Doc: `The agent says it has not yet checked something, then fetches what an earlier call already returned.
It reads the agent's words (messages, reasoning, plan explanations) for a sentence saying something
is still unchecked ("I have not yet checked whether …", "haven't looked at …", "have yet to verify
…"). The next tool call (before the agent speaks again, plan updates aside) must use a tool that an
earlier call had used successfully, and get nothing that earlier call did not: the same request, or
an output whose words (three characters or more) are at least 80% among the earlier output's. The
claim of ignorance, with the answer already in hand, is the loss of history.
One finding per such claim citing the earlier call, the words and the new call; confidence 0.65.
Blind spots: forgetting without saying so (plain re-derivation is reported as repetition, see
repeated-tool-call, only when the output is identical); contradicting an observed value in prose
("nothing changed" after a tool showed a change) needs reading the meaning and is left to the judge.`,
	Run: runForgottenResult,
}

// notYetWords are the phrases, in lower case, one of which a text must hold
// for notYet to match in it.
var notYetWords = []string{"have not", "haven't", "has not", "hasn't", "did not", "didn't", "not yet", "have yet to"}

var notYet = text.Regexp(`(?i)\b(?:have not|haven't|has not|hasn't|did not|didn't)\s+(?:yet\s+)?(?:checked|looked|seen|examined|read|verified|inspected|queried|run|confirmed)\b|\bnot yet (?:checked|looked|seen|examined|read|verified|inspected|queried|run|confirmed)\b|\bhave yet to (?:check|look|see|examine|read|verify|inspect|query|run|confirm)\b`)

func runForgottenResult(p *Pass) {
	t, f := p.Trace, p.facts
	if !f.agentActed() {
		return
	}
	for said := range t.Steps {
		text := f.agentText(said)
		if !containsAny(strings.ToLower(text), notYetWords) {
			continue // cheaply: none of the phrases a claim needs
		}
		loc := notYet().FindStringIndex(text)
		if loc == nil {
			continue
		}
		claim := sentenceAt(text, loc[0])
		next := nextCall(f, said)
		if next < 0 || !f.succeeded(next) {
			continue
		}
		if earlier := coveringCall(f, said, next); earlier >= 0 {
			p.Report(trace.Finding{
				Steps:      []int{earlier, said, next},
				Quote:      claim,
				Confidence: 0.65,
				Explanation: fmt.Sprintf("At step %d the agent says it has not yet checked this, but the call at step %d had already returned what the call at step %d fetches again.",
					said, earlier, next),
			})
		}
	}
}

// nextCall returns the first tool call after step i other than a plan
// update, if the agent does not speak before it; else -1.
func nextCall(f *facts, i int) int {
	for j := i + 1; j < len(f.t.Steps); j++ {
		s := &f.t.Steps[j]
		if s.Kind == trace.KindToolCall && !isPlanTool(s.Tool) {
			return j
		}
		if f.agentText(j) != "" {
			return -1
		}
	}
	return -1
}

// coveringCall returns the latest successful call before step before, of the
// same tool as call, whose request was the same or whose output holds at
// least 80% of the words of call's output; or -1.
func coveringCall(f *facts, before, call int) int {
	t := f.t
	want := wordSet(f.output(call))
	for e := before - 1; e >= 0; e-- {
		s := &t.Steps[e]
		if s.Kind != trace.KindToolCall || s.Tool != t.Steps[call].Tool || !f.succeeded(e) {
			continue
		}
		if f.callKey(e) == f.callKey(call) {
			return e
		}
		if len(want) == 0 {
			continue
		}
		have := wordSet(f.output(e))
		shared := 0
		for w := range want {
			if have[w] {
				shared++
			}
		}
		if shared*5 >= len(want)*4 {
			return e
		}
	}
	return -1
}

// wordSet returns the distinct words of three characters or more in text.
func wordSet(text string) map[string]bool {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '.' || r == ':' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		if len(w) >= 3 {
			words[w] = true
		}
	}
	return words
}
