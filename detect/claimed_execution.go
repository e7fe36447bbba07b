package detect

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// ClaimedExecution finds FM-3.3 where a run that executed nothing reports tests as run and passing.
var ClaimedExecution = &Detector{
	Name: "claimed-execution",
	Mode: "FM-3.3",
	Doc: `A message reports tests as run and passing in a run where nothing was executed.
It reads only runs without any sign of execution: no tool call or result, no harness event
(frameworks such as ChatDev run the program themselves and log it as one), no agent message handing
an action to a harness (a ReAct "Action:" line, as HyperAgent's executors write, whose observations
the log omits) or opening with a code executor's report ("exitcode: 0 (execution succeeded)", which
MAD's AG2 chats keep as a message). In the prose of the agents' messages (code blocks and the task
statement are not read) it looks for a sentence that reports a run of tests ("Running the Tester's
suite against …", "Re-ran full suite …") followed by a pass in the same message, one that says all
tests pass ("All 4 tests pass.", "all tests **pass**", "New isolation tests — all pass."), or a
complete count of deliveries or passes ("500/500 delivered"). Requests, predictions and conditions
are not claims: a sentence with a modal, a request or a negation ("should", "will", "please",
"ensure", "confirm", "verify", "if", "not") is skipped. Neither is honest verification by reading: a
turn (consecutive messages of one speaker) that says it traces the code, mentally or by hand, walks
or steps through it, simulates or dry-runs it is not read. One finding per run citing every message
with a claim, quoting the first; confidence 0.8.
Blind spots: claims about a single test ("test_full_cycle() passes") or in other words ("no
regressions", "everything is green") are not read; a turn that both traces by hand and claims a run
is let go; executions a format logs as plain text in other shapes than those above (an executor
agent that answers with bare program output) make the run look like one that executed nothing.`,
	Run:      runClaimedExecution,
	Finished: true,
}

func runClaimedExecution(p *Pass) {
	t := p.Trace
	if !p.facts.agentActed() || executesAnything(t) {
		return
	}
	var steps []int
	var quote string
	for start := 0; start < len(t.Steps); {
		end := start + 1
		for end < len(t.Steps) && sameSpeaker(&t.Steps[end], &t.Steps[start]) {
			end++
		}
		var claimed []int
		var first string
		for i := start; i < end; i++ {
			s := &t.Steps[i]
			if !trace.ByAgent(s) || s.Kind == trace.KindToolCall || isTaskStatement(t, i) {
				continue
			}
			if claim := executionClaim(s.Text); claim != "" {
				claimed = append(claimed, i)
				if first == "" {
					first = claim
				}
			}
		}
		if len(claimed) > 0 && !readsByHand(t, start, end) {
			steps = append(steps, claimed...)
			if quote == "" {
				quote = quoteFrom(first, 200)
			}
		}
		start = end
	}
	if len(steps) == 0 {
		return
	}
	p.Report(trace.Finding{
		Steps:      steps,
		Quote:      quote,
		Confidence: 0.8,
		Explanation: fmt.Sprintf("Nothing was executed in this run (no tool call, tool result or execution output), yet tests are reported as run and passing in %s: no step shows the run.",
			text.Plural(len(steps), "message", "messages")),
	})
}

// executesAnything reports whether a step of the run shows something being
// run, or a means of running it that the log may not show.
func executesAnything(t *trace.Trace) bool {
	for i := range t.Steps {
		s := &t.Steps[i]
		switch s.Kind {
		case trace.KindToolCall, trace.KindToolResult:
			return true
		case trace.KindSystem:
			if !quietSystemTypes[s.Type] {
				return true
			}
		case trace.KindMessage, trace.KindFinal:
			if strings.HasPrefix(s.Text, "exitcode: ") {
				return true
			}
			for _, line := range proseLines(s.Text) {
				if strings.HasPrefix(strings.TrimSpace(line), "Action:") {
					return true
				}
			}
		}
	}
	return false
}

// readingMarks are what a speaker says when it verifies by reading the code
// rather than by running it.
var readingMarks = []string{"tracing", "traced", "trace through", "trace each", "trace the", "manually",
	"mentally", "by hand", "walk through", "walking through", "step through", "stepping through",
	"simulat", "dry run", "dry-run", "by inspection", "by reading"}

// readsByHand reports whether the turn of steps [start, end) says in its
// prose that it verifies by reading: what it then reports as passing was
// traced, not run. Code is not read ("# simulate the realistic case").
func readsByHand(t *trace.Trace, start, end int) bool {
	for i := start; i < end; i++ {
		for _, line := range proseLines(t.Steps[i].Text) {
			lower := strings.ToLower(line)
			for _, m := range readingMarks {
				if strings.Contains(lower, m) {
					return true
				}
			}
		}
	}
	return false
}

var (
	runWords  = setOf("ran", "re-ran", "reran", "running", "re-running", "executed", "executing")
	testWords = setOf("test", "tests", "suite", "pytest", "unittest")
	passWords = setOf("pass", "passes", "passed", "passing")
	// countWords follow a complete count: "500/500 delivered".
	countWords = setOf("pass", "passed", "passing", "delivered", "succeeded", "ok", "green")
	// hedges make a sentence a request, a prediction, a condition, a denial
	// or thanks for another's work rather than a report of one's own.
	hedges = setOf("should", "would", "will", "must", "please", "ensure", "confirm", "verify", "if",
		"once", "until", "expect", "need", "needs", "let", "can", "could", "may", "might", "make",
		"want", "not", "never", "cannot", "can't", "don't", "doesn't", "didn't", "won't", "isn't", "aren't",
		"thank", "thanks")
)

// executionClaim returns the first sentence of a message's prose that claims
// tests were run and passed, or "". A sentence reporting a run of tests
// counts when a pass is reported in it or after it in the message.
func executionClaim(text string) string {
	var run string
	for _, line := range proseLines(text) {
		if !mayClaim(line) {
			continue
		}
		for _, sentence := range sentences(line) {
			words := lowerWords(sentence)
			if hedged(words) {
				continue
			}
			passed := hasAny(words, passWords)
			switch {
			case run != "" && passed:
				return run
			case allPass(words) || fullCount(words):
				return sentence
			case hasAny(words, runWords) && hasAny(words, testWords):
				if passed {
					return sentence
				}
				run = sentence
			}
		}
	}
	return ""
}

// mayClaim reports whether a line holds a word that any claim needs (a pass,
// a count, a run), so that the many lines without one are not split into words.
func mayClaim(line string) bool {
	lower := strings.ToLower(line)
	for _, stem := range []string{"pass", "/", "ran", "runn", "xecut"} {
		if strings.Contains(lower, stem) {
			return true
		}
	}
	return false
}

// hedged reports whether a sentence holds a hedge; "once" is one as a
// conjunction ("once Coder is done"), not as a count ("exactly once").
func hedged(words []string) bool {
	for j, w := range words {
		if hedges[w] && (w != "once" || j == 0 || !countedOnce[words[j-1]]) {
			return true
		}
	}
	return false
}

var countedOnce = setOf("exactly", "only", "at", "just")

func hasAny(words []string, set map[string]bool) bool {
	for _, w := range words {
		if set[w] {
			return true
		}
	}
	return false
}

// allPass reports whether words say that all tests pass: "all" right before
// a pass ("all pass", "all passing") in a sentence about tests, or within a
// few words before tests that then pass ("all 11 prior tests … still pass").
func allPass(words []string) bool {
	for j, w := range words {
		if w != "all" {
			continue
		}
		if j+1 < len(words) && passWords[words[j+1]] && hasAny(words, testWords) {
			return true
		}
		for k := j + 1; k < len(words) && k <= j+4; k++ {
			if testWords[words[k]] {
				return hasAny(words[k+1:], passWords)
			}
		}
	}
	return false
}

// fullCount reports whether words hold a complete count of passes or
// deliveries: "500/500 delivered", "12/12 passed".
func fullCount(words []string) bool {
	for j, w := range words[:max(len(words)-1, 0)] {
		a, b, ok := strings.Cut(w, "/")
		if n, err := strconv.Atoi(a); ok && err == nil && n > 1 && a == b && countWords[words[j+1]] {
			return true
		}
	}
	return false
}
