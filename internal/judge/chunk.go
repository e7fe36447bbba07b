package judge

import (
	"fmt"
	"slices"

	"github.com/tiktoken-go/tokenizer"

	"github.com/faultline/faultline/taxonomy"
)

// Tokenizer counts tokens offline with one of tiktoken's vocabularies.
// Models of other families tokenize differently, so counts are estimates;
// the budget keeps a margin for that.
type Tokenizer struct {
	codec  tokenizer.Codec
	system int // tokens of the system prompt, counted once
}

// DefaultEncoding is the vocabulary used unless the configuration names another.
const DefaultEncoding = "o200k_base"

// NewTokenizer loads a vocabulary (o200k_base, cl100k_base, p50k_base, r50k_base).
func NewTokenizer(encoding string) (*Tokenizer, error) {
	if encoding == "" {
		encoding = DefaultEncoding
	}
	c, err := tokenizer.Get(tokenizer.Encoding(encoding))
	if err != nil {
		return nil, fmt.Errorf("tokenizer %q: %w (known: o200k_base, cl100k_base, p50k_base, r50k_base)", encoding, err)
	}
	t := &Tokenizer{codec: c}
	t.system = t.Count(systemPrompt)
	return t, nil
}

// Name is the vocabulary's name.
func (t *Tokenizer) Name() string { return t.codec.GetName() }

// Count returns the number of tokens in s.
func (t *Tokenizer) Count(s string) int {
	n, err := t.codec.Count(s)
	if err != nil {
		// The codec only fails on input it cannot split; over-estimate
		// rather than under-estimate, so a budget is never exceeded.
		return len(s)/2 + 1
	}
	return n
}

// Budget is the room one call has, in tokens.
type Budget struct {
	Context int // what the model accepts, prompt and answer together
	Output  int // kept free for the answer
}

// DefaultBudget suits today's hosted models; local servers often have far
// less (Ollama's default context is a few thousand tokens) and must say so.
var DefaultBudget = Budget{Context: 128000, Output: 8192}

const (
	// summaryReserve is kept free in every window for the previous
	// window's summary, which is cut to summaryChars.
	summaryReserve = 800
	summaryChars   = 2400
	// wordingReserve covers the fixed wording around a window's steps (part
	// line, section titles, closing line) and the tokenizer's error when the
	// endpoint's model tokenizes differently.
	wordingReserve = 200
	// overlapDivisor: each window repeats the last step of the previous
	// one, and the steps before it that fit in a tenth of the room, so
	// nothing is judged only at an edge.
	overlapDivisor = 10
)

// view is what one call shows of a trace: the header, the task setup steps
// repeated in every window (pinned), the window's own steps, and the hints
// that cite any of them. summary is filled in when the previous window has
// been judged.
type view struct {
	header          string
	window, windows int
	pinned, own     []int
	visible         map[int]bool
	steps, hints    string
	summary         string
}

func newView(r *rendered, pinned, own []int, window, windows int) *view {
	v := &view{header: r.header, window: window, windows: windows, pinned: pinned, own: own, visible: map[int]bool{}}
	shown := append(append([]int(nil), pinned...), own...)
	for _, i := range shown {
		v.visible[i] = true
	}
	v.steps = r.stepsText(shown)
	v.hints = r.hintsText(v.visible)
	return v
}

// span describes the window's own steps.
func (v *view) span() string { return spanOf(v.own) }

// visibleSpan describes every step the view shows, for error messages.
func (v *view) visibleSpan() string {
	if len(v.pinned) == 0 {
		return spanOf(v.own)
	}
	return spanOf(v.pinned) + " and " + spanOf(v.own)
}

// plan returns the views a trace is judged through: one when the whole
// rendered trace fits the budget, otherwise overlapping windows of steps,
// each with the task setup pinned in front and room for a summary of the
// windows before it. It fails when a single step cannot fit.
func plan(r *rendered, tok *Tokenizer, b Budget) ([]*view, error) {
	n := len(r.t.Steps)
	whole := newView(r, nil, seq(0, n), 0, 1)
	// A token is at least one byte, so a prompt whose bytes fit needs no
	// counting: most traces are decided without running the tokenizer.
	prompt := userPrompt(whole)
	if tok.system+len(prompt)+b.Output <= b.Context || tok.system+tok.Count(prompt)+b.Output <= b.Context {
		return []*view{whole}, nil
	}
	costs := make([]int, n)
	for i := range costs {
		costs[i] = tok.Count(r.blocks[i])
	}
	all := map[int]bool{}
	for i := range n {
		all[i] = true
	}
	avail := b.Context - b.Output - tok.system - tok.Count(r.header) - tok.Count(r.hintsText(all)) - summaryReserve - wordingReserve
	setup := r.setup
	setupCost := sum(costs[:setup])
	if setup == n || setupCost > avail/3 {
		// Pinning the setup would leave too little room for anything else;
		// it is then shown once, in the first window.
		setup, setupCost = 0, 0
	}
	room := avail - setupCost
	for i := setup; i < n; i++ {
		if costs[i] > room {
			return nil, fmt.Errorf("step S%d alone needs about %d tokens, more than the %d left for steps in a context of %d (raise the model's context, or lower the render limits)", i, costs[i], max(room, 0), b.Context)
		}
	}
	var ranges [][2]int
	for start := setup; start < n; {
		end, used := start, 0
		for end < n && used+costs[end] <= room {
			used += costs[end]
			end++
		}
		ranges = append(ranges, [2]int{start, end})
		if end == n {
			break
		}
		// Repeat at least the last step, and more while they stay within
		// a tenth of the room.
		next, overlap := end-1, costs[end-1]
		for next-1 > start && overlap+costs[next-1] <= room/overlapDivisor {
			next--
			overlap += costs[next]
		}
		next = max(next, start+1)
		start = next
	}
	views := make([]*view, len(ranges))
	for k, rg := range ranges {
		views[k] = newView(r, seq(0, setup), seq(rg[0], rg[1]), k, len(ranges))
	}
	return views, nil
}

// mergeWindows combines the answers of a trace's windows: a mode is present
// when any window found it, with the evidence of its earliest located
// occurrence; otherwise the last window's verdict stands. The summary and
// the success guess are the last window's, which saw the whole run.
// A system failure in any window makes the trace one, with its earliest
// evidence: the window that found it gave no MAST verdicts to merge, and
// the others judged the behaviour of a run that the harness broke.
func mergeWindows(parts []*Answer) *Answer {
	last := parts[len(parts)-1]
	if len(parts) == 1 {
		return last
	}
	out := &Answer{Modes: map[string]ModeAnswer{}, Summary: last.Summary, TaskSuccess: last.TaskSuccess}
	for _, p := range parts {
		if p.System != nil && (out.System == nil || firstStep(p.System.Steps) < firstStep(out.System.Steps)) {
			out.System = p.System
		}
	}
	if out.System != nil {
		out.Dropped = claimedModes(parts)
		return out
	}
	for _, m := range taxonomy.MAST.Modes {
		best, found := last.Modes[m.Code], false
		for _, p := range parts {
			a := p.Modes[m.Code]
			if a.Present && (!found || firstStep(a.Steps) < firstStep(best.Steps)) {
				best, found = a, true
			}
		}
		out.Modes[m.Code] = best
	}
	return out
}

// claimedModes lists, in taxonomy order, the modes any of the answers
// found present or dropped beside a system failure.
func claimedModes(answers []*Answer) []string {
	var codes []string
	for _, m := range taxonomy.MAST.Modes {
		for _, a := range answers {
			if a.Modes[m.Code].Present || slices.Contains(a.Dropped, m.Code) {
				codes = append(codes, m.Code)
				break
			}
		}
	}
	return codes
}

// firstStep is the earliest cited step, or -1 when none is cited.
func firstStep(steps []int) int {
	if len(steps) == 0 {
		return -1
	}
	return slices.Min(steps)
}

func seq(from, to int) []int {
	out := make([]int, 0, max(to-from, 0))
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func sum(xs []int) int {
	total := 0
	for _, x := range xs {
		total += x
	}
	return total
}
