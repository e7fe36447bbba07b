package detect

import (
	"slices"
	"testing"

	"github.com/faultline/faultline/internal/shared"
	"github.com/faultline/faultline/trace"
)

// TestChatDetectorsOnAG2 pins what the chat detectors find in the eight AG2
// group chats of the sample file, labelled in testdata/labels/real.jsonl.
// Every finding was read against its chat:
//   - rate-limiter: the Planner's message writes "**Coder's output:**" and
//     "**Tester's output:**" and then runs the suite it wrote, four PASSes,
//     in a chat where nothing is executed (FM-1.2, FM-3.3 at step 1).
//   - pubsub-broker: the Planner writes the Coder's implementation, the
//     Tester's suite and its findings (step 1) and later the Tester's
//     verification report (step 4); steps 1, 2, 4 and 5 report the suite as
//     run and passing (FM-1.2, FM-3.3).
//   - perf-optimization: the Planner writes the Coder's and the Tester's
//     turns; only "**Tester:**" is seen, as the Coder never speaks (FM-1.2).
//   - raise-vs-none-dispute: the Planner settles a dispute the Coder and
//     Tester were asked to resolve, under its own name: a breach without a
//     label, missed.
//   - The Testers of linked-list-merge, cache-refactor, csv-report-cli,
//     state-machine-todo and raise-vs-none-dispute report PASS after saying
//     they trace the code by hand: not claims of a run.
func TestChatDetectorsOnAG2(t *testing.T) {
	traces := ingestAll(t, shared.Path(t, "samples/ag2/raw_ag2_records.json"))
	want := map[string][]string{
		"mad:AG2:rate-limiter":          {"role-breach [1]", "claimed-execution [1]"},
		"mad:AG2:pubsub-broker":         {"role-breach [1]", "role-breach [4]", "claimed-execution [1 2 4 5]"},
		"mad:AG2:perf-optimization":     {"role-breach [1]"},
		"mad:AG2:raise-vs-none-dispute": nil,
		"mad:AG2:linked-list-merge":     nil,
		"mad:AG2:cache-refactor":        nil,
		"mad:AG2:csv-report-cli":        nil,
		"mad:AG2:state-machine-todo":    nil,
	}
	checkPinned(t, []*Detector{RoleBreach, ClaimedExecution}, traces, func(tr *trace.Trace) string { return tr.ID }, want)
}

func TestProseLines(t *testing.T) {
	text := "# Plan\n```python\n# Coder's output\nx = 1\n```\nDone.\n"
	var got []string
	for at, line := range proseLines(text) {
		if text[at:at+len(line)] != line {
			t.Errorf("line %q is not at offset %d", line, at)
		}
		got = append(got, line)
	}
	if want := []string{"# Plan", "Done."}; !slices.Equal(got, want) {
		t.Errorf("prose lines %q, want %q", got, want)
	}
}

func TestLowerWords(t *testing.T) {
	got := lowerWords("**Result: all tests PASS** — Re-ran `test_pop`, 500/500 don't")
	want := []string{"result", "all", "tests", "pass", "re-ran", "test_pop", "500/500", "don't"}
	if !slices.Equal(got, want) {
		t.Errorf("words %q, want %q", got, want)
	}
}
