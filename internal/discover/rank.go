package discover

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/stats"
)

// Pattern is a recurring failure pattern: signatures alike enough to be
// one, the traces that show it, and how it sets failed runs apart from
// successful ones.
type Pattern struct {
	// ID is a short hash of the leading signature: the same signature
	// gets the same ID on every run, so that a rule or an address can
	// name the pattern.
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`
	// Key is the tool of an error pattern, the mode of a finding pattern.
	Key string `json:"key,omitempty"`
	// Template is the leading signature's normalised text; Variants the
	// other signatures merged into it (the most common first, at most
	// maxVariants) and Merged how many there were.
	Template string   `json:"template"`
	Variants []string `json:"variants"`
	Merged   int      `json:"merged"`
	// Failed and Succeeded are the failed and successful traces with the
	// pattern, out of all failed and successful traces.
	Failed    analyze.Proportion `json:"failed"`
	Succeeded analyze.Proportion `json:"succeeded"`
	// Lift is the failed share over the successful one, minus 1, as the
	// report computes it; nil when no successful trace shows the pattern.
	Lift *float64 `json:"lift"`
	// Test is Fisher's exact test of failed against successful traces,
	// its q-value Benjamini-Hochberg over every pattern tested.
	Test  analyze.Significance `json:"test"`
	Class string               `json:"class"`
	// NeverInSuccesses flags a pattern no successful trace shows.
	NeverInSuccesses bool         `json:"never_in_successes"`
	Models           []ModelCount `json:"models"`
	Quotes           []Quote      `json:"quotes"`
	// Traces are the traces with the pattern, failed ones first, each in
	// id order.
	Traces []TraceRef `json:"traces"`
	// Also lists the other signatures that exactly the same runs show
	// (kind, then title), folded into this one.
	Also []string `json:"also"`
	// Naming is what a model made of the pattern, when one was asked.
	Naming *Naming `json:"naming,omitempty"`
}

// Signature is the pattern's leading signature.
func (p *Pattern) Signature() Signature {
	return Signature{Kind: p.Kind, Key: p.Key, Template: p.Template}
}

// Title is the pattern's signature without its kind: its key and
// template.
func (p *Pattern) Title() string {
	if p.Key == "" {
		return p.Template
	}
	return p.Key + ": " + p.Template
}

// LiftText words the lift: a percentage, "only in failures", or "-" when
// no failed trace shows the pattern either.
func (p *Pattern) LiftText() string {
	switch {
	case p.Lift != nil:
		return fmt.Sprintf("%+.0f%%", 100**p.Lift)
	case p.NeverInSuccesses:
		return "only in failures"
	}
	return "-"
}

// ModelCount is how many failed and successful traces of a model show a
// pattern (models by their canonical names).
type ModelCount struct {
	Model     string `json:"model"`
	Failed    int    `json:"failed"`
	Succeeded int    `json:"succeeded"`
}

// Quote is a step's text as the trace has it (its first meaningful line),
// with where it is, so that a reader can go and see.
type Quote struct {
	Trace string `json:"trace"`
	Step  int    `json:"step"` // -1: the finding cites no step
	Text  string `json:"text"`
}

// TraceRef is a trace with a pattern.
type TraceRef struct {
	ID     string `json:"id"`
	Model  string `json:"model"`
	Failed bool   `json:"failed"`
	Step   int    `json:"step"` // where the pattern shows first, -1 when nowhere in particular
}

const (
	maxVariants = 5
	// maxQuotes is how many quotes a pattern keeps, from as many traces.
	maxQuotes = 3
	idLength  = 10
)

// PatternID is the ID of a pattern led by a signature.
func PatternID(s Signature) string {
	sum := sha256.Sum256([]byte(s.String()))
	return hex.EncodeToString(sum[:])[:idLength]
}

// patternOf makes a pattern of a group of signatures (its leader first):
// the traces that show any of them, each once, counted by outcome and by
// model.
func (d *discovery) patternOf(group []*signatureStats) *Pattern {
	lead := group[0]
	p := &Pattern{ID: PatternID(lead.sig), Kind: lead.sig.Kind, Key: lead.sig.Key, Template: lead.sig.Template,
		Variants: []string{}, Merged: len(group) - 1, Models: []ModelCount{}, Quotes: []Quote{}, Traces: []TraceRef{}, Also: []string{}}
	// Each trace once, at the first step where any signature shows.
	first := map[int32]int32{}
	for i, s := range group {
		if i > 0 && len(p.Variants) < maxVariants {
			p.Variants = append(p.Variants, s.sig.Template)
		}
		for j, t := range s.traces {
			at, seen := first[t]
			if step := s.steps[j]; !seen || (step >= 0 && (at < 0 || step < at)) {
				first[t] = step
			}
		}
	}
	traces := make([]int32, 0, len(first))
	for t := range first {
		traces = append(traces, t)
	}
	slices.Sort(traces) // the cohort's order: by id
	models := map[string]*ModelCount{}
	var succeededRefs []TraceRef
	for _, t := range traces {
		ct := &d.cohort.Traces[t]
		model := d.model(d.cohort.Text(ct.Model))
		mc := models[model]
		if mc == nil {
			mc = &ModelCount{Model: model}
			models[model] = mc
		}
		ref := TraceRef{ID: d.cohort.ID(ct), Model: model, Step: int(first[t]), Failed: d.failed[t]}
		if ref.Failed {
			p.Failed.K++
			mc.Failed++
			p.Traces = append(p.Traces, ref)
		} else {
			p.Succeeded.K++
			mc.Succeeded++
			succeededRefs = append(succeededRefs, ref)
		}
	}
	p.Traces = append(p.Traces, succeededRefs...)
	p.Failed.N, p.Succeeded.N = d.failedN, d.succeededN
	for _, mc := range models {
		p.Models = append(p.Models, *mc)
	}
	slices.SortFunc(p.Models, func(a, b ModelCount) int {
		return cmp.Or(cmp.Compare(b.Failed, a.Failed), cmp.Compare(b.Succeeded, a.Succeeded), cmp.Compare(a.Model, b.Model))
	})
	// Quotes from failed traces first, the leading signature's before the
	// others', one per trace.
	var quoted []int32
	for _, wantFailed := range []bool{true, false} {
		for _, s := range group {
			for _, q := range s.quotes {
				if len(p.Quotes) < maxQuotes && d.failed[q.trace] == wantFailed && !slices.Contains(quoted, q.trace) {
					quoted = append(quoted, q.trace)
					p.Quotes = append(p.Quotes, Quote{Trace: d.cohort.ID(&d.cohort.Traces[q.trace]), Step: int(q.step), Text: q.text})
				}
			}
		}
	}
	return p
}

// fold makes one pattern of the patterns that exactly the same runs show
// (a run that ends with no tool call is the run whose model never
// answered): the most telling stays, an error before a finding before an
// ending and, within a kind, the longer signature, and lists the others.
// Order is kept otherwise.
func fold(patterns []*Pattern) []*Pattern {
	kindOrder := map[Kind]int{KindError: 0, KindFinding: 1, KindEnding: 2}
	better := func(a, b *Pattern) bool {
		if kindOrder[a.Kind] != kindOrder[b.Kind] {
			return kindOrder[a.Kind] < kindOrder[b.Kind]
		}
		return len(a.Title()) > len(b.Title())
	}
	kept := map[string]int{}
	var out []*Pattern
	for _, p := range patterns {
		h := sha256.New()
		for _, t := range p.Traces {
			h.Write([]byte(t.ID))
			h.Write([]byte{0})
		}
		key := string(h.Sum(nil))
		i, seen := kept[key]
		if !seen {
			kept[key] = len(out)
			out = append(out, p)
			continue
		}
		keep, other := out[i], p
		if better(p, keep) {
			keep, other = p, keep
			keep.Also = append(keep.Also, other.Also...)
			other.Also = nil
			out[i] = keep
		}
		keep.Also = append(keep.Also, string(other.Kind)+" "+other.Title())
	}
	return out
}

// rank tests every pattern, adjusts the q-values together, calls each
// pattern by the report's rule, and orders them: by failed traces covered,
// then by lift (a pattern never seen in a success first), then by ID.
func rank(patterns []*Pattern, rule analyze.Rule) {
	p := make([]float64, len(patterns))
	for i, pt := range patterns {
		a, b := pt.Failed.K, pt.Failed.N-pt.Failed.K
		c, d := pt.Succeeded.K, pt.Succeeded.N-pt.Succeeded.K
		p[i] = stats.FisherExact(a, b, c, d)
		fs, _ := pt.Failed.Share()
		if ss, ok := pt.Succeeded.Share(); ok && ss > 0 {
			pt.Lift = stats.Round4(fs/ss - 1)
		}
		pt.NeverInSuccesses = pt.Failed.K > 0 && pt.Succeeded.K == 0
	}
	for i, q := range stats.BenjaminiHochberg(p) {
		patterns[i].Test = analyze.Significance{P: analyze.Significant4(p[i]), Q: analyze.Significant4(q)}
		patterns[i].Class = rule.Class(patterns[i].Failed, patterns[i].Succeeded, q)
	}
	lift := func(pt *Pattern) float64 {
		switch {
		case pt.Lift != nil:
			return *pt.Lift
		case pt.NeverInSuccesses:
			return math.Inf(1)
		}
		return math.Inf(-1)
	}
	slices.SortStableFunc(patterns, func(a, b *Pattern) int {
		return cmp.Or(cmp.Compare(b.Failed.K, a.Failed.K), cmp.Compare(lift(b), lift(a)), cmp.Compare(a.ID, b.ID))
	})
}
