package rules

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/trace"
)

// shape is a compiled rule's evaluation over a whole trace. It adds to
// work one unit per matcher evaluated and per remembered step it revisits,
// so that tests can check the work stays linear in the steps.
type shape interface {
	eval(t *trace.Trace, work *int) []trace.Finding
}

// maxCited bounds the steps one finding cites.
const maxCited = 20

// Detectors returns the rules' detectors, in file order.
func (s *Set) Detectors() []*detect.Detector {
	out := make([]*detect.Detector, len(s.Rules))
	for i, r := range s.Rules {
		out[i] = r.Detector
	}
	return out
}

// compile builds each rule's detector.
func (s *Set) compile() error {
	for _, r := range s.Rules {
		if err := s.compileRule(r); err != nil {
			return fmt.Errorf("%s:%d: rule %s: %w", s.Path, r.Line, r.Name, err)
		}
	}
	return nil
}

func (s *Set) compileRule(r *Rule) error {
	sp := canonical(r.Spec)
	name := sp.Name
	var sh shape
	var err error
	switch {
	case sp.Match != nil:
		sh, err = newMatchShape(name, sp.Match)
	case sp.Sequence != nil:
		sh, err = newSequenceShape(name, sp.Sequence)
	case sp.NeverFollowed != nil:
		sh, err = newNeverFollowedShape(name, sp.NeverFollowed)
	case sp.Repeat != nil:
		sh, err = newRepeatShape(name, sp.Repeat)
	case sp.Count != nil:
		sh, err = newCountShape(name, sp.Count)
	case sp.Budget != nil:
		sh = &budgetShape{name: name, budget: *sp.Budget}
	default:
		err = fmt.Errorf("no shape")
	}
	if err != nil {
		return err
	}
	r.prog = &program{shape: sh, confidence: sp.Confidence}
	d := &detect.Detector{
		Name:     name,
		Mode:     sp.Mode,
		Doc:      summaryFirst(sp.Doc),
		Run:      r.prog.run,
		Finished: sp.NeverFollowed != nil && sp.NeverFollowed.Within == 0,
		Version:  digest(sp),
		Severity: sp.Severity,
	}
	if s.declared(sp.Mode) {
		d.Taxonomy = detect.CustomTaxonomy
	}
	r.Detector = d
	return nil
}

// program runs a compiled rule as a detector.
type program struct {
	shape      shape
	confidence float64
}

func (p *program) run(pass *detect.Pass) {
	var work int
	for _, f := range p.evaluate(pass.Trace, &work) {
		pass.Report(f)
	}
}

func (p *program) evaluate(t *trace.Trace, work *int) []trace.Finding {
	fs := p.shape.eval(t, work)
	for i := range fs {
		fs[i].Confidence = p.confidence
	}
	return fs
}

// summaryFirst puts the doc's first sentence on a line of its own, since
// a detector's summary is its doc's first line, and a rule's doc may be
// one long line.
func summaryFirst(doc string) string {
	doc = strings.TrimSpace(doc)
	first, _, _ := strings.Cut(doc, "\n")
	if i := strings.Index(first, ". "); i >= 0 {
		return doc[:i+1] + "\n" + strings.TrimSpace(doc[i+2:])
	}
	return doc
}

// steps is a list of cited steps, capped at maxCited, with the count of
// all it was offered.
type steps struct {
	cited []int
	total int
}

func (c *steps) add(i ...int) {
	c.total++
	for _, s := range i {
		if len(c.cited) < maxCited {
			c.cited = append(c.cited, s)
		}
	}
}

// citedNote says that only some of the steps are cited, when that is so.
func citedNote(cited, of int) string {
	if cited < of {
		return fmt.Sprintf(" (the first %d cited)", cited)
	}
	return ""
}
