package judge

import (
	"fmt"
	"io"
	"strings"

	"github.com/faultline/faultline/trace"
)

// Preview is what judging a trace would send, worked out without calling
// anything: the first call's messages and the prompt size of every window.
type Preview struct {
	Trace    *trace.Trace
	Messages []Message
	// PromptTokens holds, per window, the tokens of the system and user
	// messages; windows after the first count their summary at its reserve.
	PromptTokens []int
	tok          *Tokenizer
	opt          Options
}

// Total is the prompt tokens of one judgement of the trace.
func (p *Preview) Total() int { return sum(p.PromptTokens) }

// NewPreview renders t as a run with opt would.
func NewPreview(t *trace.Trace, tok *Tokenizer, opt Options) (*Preview, error) {
	views, err := plan(render(t, opt.Render, opt.HintSource), tok, opt.Budget)
	if err != nil {
		return nil, err
	}
	p := &Preview{Trace: t, tok: tok, opt: opt}
	for _, v := range views {
		n := tok.system + tok.Count(userPrompt(v))
		if v.window > 0 {
			n += summaryReserve
		}
		p.PromptTokens = append(p.PromptTokens, n)
	}
	p.Messages = []Message{{Role: "system", Content: systemPrompt}, {Role: "user", Content: userPrompt(views[0])}}
	return p, nil
}

// Write prints the first call's messages and the estimate.
func (p *Preview) Write(w io.Writer) error {
	windows := len(p.PromptTokens)
	perWindow := make([]string, windows)
	for i, n := range p.PromptTokens {
		perWindow[i] = thousands(n)
	}
	samples := max(p.opt.Samples, 1)
	var b strings.Builder
	fmt.Fprintf(&b, "=== system message (%s tokens; the same in every call)\n%s\n", thousands(p.tok.system), p.Messages[0].Content)
	fmt.Fprintf(&b, "=== user message, window 1 of %d (%s tokens)\n%s\n", windows, thousands(p.tok.Count(p.Messages[1].Content)), p.Messages[1].Content)
	fmt.Fprintf(&b, "=== estimate (%s tokenizer)\ntrace %s: %d steps; %d window(s) of %s prompt tokens, %s in all; %s tokens kept for each answer in a context of %s\n",
		p.tok.Name(), p.Trace.ID, len(p.Trace.Steps), windows, strings.Join(perWindow, " + "), thousands(p.Total()), thousands(p.opt.Budget.Output), thousands(p.opt.Budget.Context))
	fmt.Fprintf(&b, "%d call(s) per trace (%d window(s) x %d sample(s)), corrective retries aside; ", windows*samples, windows, samples)
	if cost := p.opt.Price.cost(p.Total()*samples, 0); cost != nil {
		fmt.Fprintf(&b, "input cost about $%.4f\n", *cost)
	} else {
		b.WriteString("cost unknown (no price for this model)\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
