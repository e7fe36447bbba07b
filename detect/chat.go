package detect

import (
	"iter"
	"strings"
	"unicode"

	"github.com/faultline/faultline/trace"
)

// Facts about multi-agent chats that the detectors of chat failures share:
// which step states the task, who the agents are, and which lines of a
// message are prose rather than code.

// isTaskStatement reports whether step i is the run's task statement: chat
// formats log the person's request in the seat of the first speaker (AG2's
// Planner opens with it), and those words are not that agent's.
func isTaskStatement(t *trace.Trace, i int) bool {
	task := strings.TrimSpace(t.Task)
	return task != "" && strings.TrimSpace(t.Steps[i].Text) == task
}

// chatAgents returns the names of the agents that speak in the run.
func chatAgents(t *trace.Trace) map[string]bool {
	agents := map[string]bool{}
	for i := range t.Steps {
		if s := &t.Steps[i]; s.Agent != "" && trace.ByAgent(s) {
			agents[s.Agent] = true
		}
	}
	return agents
}

// proseLines yields the lines of text that lie outside fenced code blocks,
// each with its byte offset: a Python comment such as "# Coder's output" or a
// test named test_all_pass is code, not the speaker's words.
func proseLines(text string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		inCode := false
		for at := 0; at < len(text); {
			end := strings.IndexByte(text[at:], '\n')
			if end < 0 {
				end = len(text)
			} else {
				end += at
			}
			line := text[at:end]
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inCode = !inCode
			} else if !inCode && !yield(at, line) {
				return
			}
			at = end + 1
		}
	}
}

// lowerWords splits lower-cased text into words: runs of letters, digits and
// the characters that hold a word together ("re-ran", "don't", "500/500",
// "test_refill"), so that markdown around a word ("**pass**") falls away.
func lowerWords(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-'/_", r)
	})
}

// setOf makes a set of words.
func setOf(words ...string) map[string]bool {
	set := make(map[string]bool, len(words))
	for _, w := range words {
		set[w] = true
	}
	return set
}
