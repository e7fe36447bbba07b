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

// Selection is what a run over several traces would do, worked out without
// calling anything: which traces would be judged and which skipped as
// system failures only, with the prompt tokens of each share.
type Selection struct {
	// First previews the first trace that would be judged; nil when none would.
	First *Preview
	// Judged counts the traces that would be sent to the model, Skips those
	// that would not, and Failures those that could not be planned.
	Judged   int
	Skips    []Skip
	Failures []Failure
	// JudgeTokens and SkipTokens are the prompt tokens of the judged and of
	// the skipped traces, every sample counted, corrective retries aside.
	JudgeTokens, SkipTokens int
	tok                     *Tokenizer
	opt                     Options
}

// NewSelection starts an empty selection judged as a run with opt would.
func NewSelection(tok *Tokenizer, opt Options) *Selection {
	return &Selection{tok: tok, opt: opt}
}

// Add plans t as the run would, and counts it.
func (s *Selection) Add(t *trace.Trace) {
	p, err := NewPreview(t, s.tok, s.opt)
	if err != nil {
		s.Failures = append(s.Failures, Failure{Trace: t.ID, Error: err.Error()})
		return
	}
	tokens := p.Total() * max(s.opt.Samples, 1)
	if reason, skip := SystemOnly(t, s.opt.HintSource); skip && !s.opt.IncludeSystemFailures {
		s.Skips = append(s.Skips, Skip{Trace: t.ID, Reason: reason})
		s.SkipTokens += tokens
		return
	}
	s.Judged++
	s.JudgeTokens += tokens
	if s.First == nil {
		s.First = p
	}
}

// Write prints the first judged trace's preview, then the counts and the
// skipped and unplannable traces, one a line.
func (s *Selection) Write(w io.Writer) error {
	if s.First != nil {
		if err := s.First.Write(w); err != nil {
			return err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "=== selection (%d traces; a run leaves out those already judged with this prompt)\n", s.Judged+len(s.Skips)+len(s.Failures))
	fmt.Fprintf(&b, "%d would be judged: about %s prompt tokens\n", s.Judged, thousands(s.JudgeTokens))
	fmt.Fprintf(&b, "%d skipped as system failures only: about %s prompt tokens not sent", len(s.Skips), thousands(s.SkipTokens))
	if len(s.Skips) > 0 {
		b.WriteString(" (--include-system-failures judges them)")
	}
	b.WriteString("\n")
	for _, sk := range s.Skips {
		fmt.Fprintf(&b, "  %s: %s\n", sk.Trace, sk.Reason)
	}
	if len(s.Failures) > 0 {
		fmt.Fprintf(&b, "%d could not be judged:\n", len(s.Failures))
		for _, f := range s.Failures {
			fmt.Fprintf(&b, "  %s: %s\n", f.Trace, f.Error)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
