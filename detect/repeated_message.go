package detect

import (
	"fmt"
	"hash/maphash"

	"github.com/faultline/faultline/trace"
)

// RepeatedMessage finds FM-1.3 where an agent says the same thing again.
var RepeatedMessage = &Detector{
	Name: "repeated-message",
	Mode: "FM-1.3",
	Doc: `An agent sends the same message again and what follows it is the same too.
It compares the messages, reasoning and final answers of each agent (by agent name and role),
whitespace collapsed, of at least 60 characters (short acknowledgements and headers repeat
harmlessly). A copy counts only when someone else spoke since the previous copy (copies in a row are
a log printing one message twice) and when the answer to it (what others said after it until the
agent spoke again: tool results, other agents' replies) is the same as the answer to the first copy,
or missing: a loop that asks the same and hears the same. Each repeated message is one finding
citing its copies; confidence 0.6 for two copies plus 0.1 a copy, up to 0.9.
When the answers differ, the work moved on and only the words repeat (a filler line before each
step, iteration over changing state such as "skip to the next song", a framework re-sending its
phase prompt); that is not reported: on the human-labelled MAD traces such repeats are not labelled
step repetition. Nor are copies on either side of a restart: where the system event that opened the
run is logged again, the run started over (a harness that re-initialises the agent replays it), and
only copies since the last restart count.
Blind spots: paraphrased repeats are not recognised; canned messages of a framework or of a proxy
agent that repeat with identical answers are reported like any other.`,
	Run: runRepeatedMessage,
}

func runRepeatedMessage(p *Pass) {
	t := p.Trace
	type key struct {
		who  string
		text uint64
	}
	groups := map[key][]int{}
	var order []key
	for i := range t.Steps {
		s := &t.Steps[i]
		if !trace.ByAgent(s) || s.Kind == trace.KindToolCall {
			continue
		}
		text := trace.NormalizeSpace(s.Text)
		if len(text) < 60 {
			continue
		}
		k := key{s.Agent + "\x00" + s.Role, maphash.String(outputSeed, text)}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	restarts := replays(t)
	for _, k := range order {
		copies := repeatsWithSameAnswer(t, laterCopies(t, sinceRestart(groups[k], restarts)))
		if len(copies) < 2 {
			continue
		}
		first := &t.Steps[copies[0]]
		who := first.Agent
		if who == "" {
			who = first.Role
		}
		p.Report(trace.Finding{
			Steps:      copies,
			Quote:      quoteFrom(first.Text, 160),
			Confidence: min(0.9, 0.6+0.1*float64(len(copies)-2)),
			Explanation: fmt.Sprintf("%s said the same thing %s (steps %s) and got the same answer each time: the repeats added nothing.",
				who, times(len(copies)), joinInts(copies)),
		})
	}
}

// replays returns where the run starts over: the steps where the system
// event that opened the run is logged again (HyperAgent's "Initialized
// HyperAgent instance …"). What is repeated after such a point is a
// restarted run replaying, not the agent redoing a step.
func replays(t *trace.Trace) []int {
	first := -1
	var out []int
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Kind != trace.KindSystem || s.Text == "" {
			continue
		}
		if first < 0 {
			first = i
		} else if s.Text == t.Steps[first].Text {
			out = append(out, i)
		}
	}
	return out
}

// sinceRestart keeps the copies of a message said since the run last
// started over before the last copy: copies on either side of a restart
// are the restarted run replaying, not a repeat.
func sinceRestart(copies, restarts []int) []int {
	last := copies[len(copies)-1]
	from := -1
	for _, r := range restarts {
		if r <= last {
			from = r
		}
	}
	kept := copies[:0:0]
	for _, c := range copies {
		if c >= from {
			kept = append(kept, c)
		}
	}
	return kept
}

// laterCopies keeps the copies of a message said again after someone else
// spoke: a copy right after the last, in the same turn, is a duplicate of
// the log, not of the agent.
func laterCopies(t *trace.Trace, copies []int) []int {
	kept := []int{copies[0]}
	for _, c := range copies[1:] {
		if otherSpeakerBetween(t, kept[len(kept)-1], c) {
			kept = append(kept, c)
		}
	}
	return kept
}

// repeatsWithSameAnswer keeps the copies answered the way the first copy
// was, or not answered at all.
func repeatsWithSameAnswer(t *trace.Trace, copies []int) []int {
	want, wantOK := answerTo(t, copies[0])
	kept := []int{copies[0]}
	for _, c := range copies[1:] {
		if got, ok := answerTo(t, c); !ok || !wantOK || got == want {
			kept = append(kept, c)
		}
	}
	return kept
}

func sameSpeaker(a, b *trace.Step) bool { return a.Agent == b.Agent && a.Role == b.Role }

func otherSpeakerBetween(t *trace.Trace, a, b int) bool {
	for i := a + 1; i < b; i++ {
		if !sameSpeaker(&t.Steps[i], &t.Steps[a]) {
			return true
		}
	}
	return false
}

// answerTo hashes what others said in reply to step i: the steps of other
// speakers after it (and after the speaker's own steps that directly follow
// it) until the speaker speaks again. ok is false when nobody replied.
func answerTo(t *trace.Trace, i int) (uint64, bool) {
	s := &t.Steps[i]
	var h maphash.Hash
	h.SetSeed(outputSeed)
	replies := 0
	for j := i + 1; j < len(t.Steps); j++ {
		n := &t.Steps[j]
		if sameSpeaker(n, s) {
			if replies > 0 {
				break
			}
			continue
		}
		h.WriteString(trace.NormalizeSpace(n.Text))
		h.WriteByte(0)
		replies++
	}
	return h.Sum64(), replies > 0
}
