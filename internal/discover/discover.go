package discover

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// Reader is what discovery reads from a store: the cohort in bulk (its
// outcomes, models and findings' sites), then a few steps of each trace
// with a decided outcome, a batch of traces at a time.
type Reader interface {
	analyze.CohortLoader
	PickSteps(ctx context.Context, ids []string, p store.StepPick, fn func(store.PickedSteps) error) error
}

// Options say what discovery covers and how it groups.
type Options struct {
	// IDs restricts discovery to these traces; nil means every trace.
	IDs []string
	// Sources selects the annotation sources whose findings make finding
	// signatures, as store.MatchSource selects them; nil selects the
	// detectors.
	Sources []string
	// Kinds are the kinds of signature to find; nil finds every kind.
	Kinds []Kind
	// MinFailed is the fewest failed traces a pattern must cover to be
	// reported (and tested); below 1, 1.
	MinFailed int
	// Limit keeps the first Limit patterns of the ranking; 0 keeps all.
	Limit int
	// LastCalls is how many of a run's last tool calls its ending shows;
	// 0 means DefaultLastCalls.
	LastCalls int
	// Similarity and MaxLeaders say how near-identical signatures merge;
	// zero values mean DefaultSimilarity and DefaultMaxLeaders.
	Similarity float64
	MaxLeaders int
	// Rule calls patterns fatal or not; the zero Rule means the report's.
	Rule    analyze.Rule
	Aliases store.ModelAliases
	// Progress, when set, is called as traces are read: done of total.
	Progress func(done, total int)
}

// Defaults of Options.
const (
	DefaultLastCalls  = 3
	DefaultSimilarity = 0.75
	DefaultMaxLeaders = 5000
	// textLimit is how many characters of a step's text and arguments are
	// read: a first line, a command's head.
	textLimit = 1024
)

// Result is what discovery found.
type Result struct {
	Kinds []Kind `json:"kinds"`
	// Traces counts the traces selected; Failed and Succeeded those whose
	// primary outcome is decided, and Undecided those left out of every
	// figure, having none.
	Traces     int     `json:"traces"`
	Failed     int     `json:"failed"`
	Succeeded  int     `json:"succeeded"`
	Undecided  int     `json:"undecided"`
	MinFailed  int     `json:"min_failed"`
	LastCalls  int     `json:"last_calls"`
	Similarity float64 `json:"similarity"`
	// Signatures counts the distinct signatures found; Tested the
	// patterns that covered at least MinFailed failed traces, over which
	// q-values are adjusted; Patterns holds them, ranked, cut to the limit.
	Signatures int          `json:"signatures"`
	Tested     int          `json:"tested"`
	Rule       analyze.Rule `json:"rule"`
	Patterns   []*Pattern   `json:"patterns"`
}

// outcome classes of a trace.
const (
	undecided int8 = iota
	succeeded
	failed
)

// discovery is one run of Discover.
type discovery struct {
	cohort              *store.Cohort
	failed              []bool // by cohort index
	failedN, succeededN int
	aliases             store.ModelAliases
	canonical           map[string]string
}

// model is a model's canonical name, looked up once per distinct name.
func (d *discovery) model(name string) string {
	c, ok := d.canonical[name]
	if !ok {
		c = d.aliases.Canonical(name)
		if c == "" {
			c = analyze.UnknownGroup
		}
		d.canonical[name] = c
	}
	return c
}

// Discover finds the recurring failure patterns of the selected traces.
// It reads the cohort, then the few steps signatures are made from, of
// the traces with a decided outcome only, and keeps per distinct
// signature the traces that show it: memory grows with the signatures
// and their occurrences, never with the traces' steps.
func Discover(ctx context.Context, r Reader, opt Options) (*Result, error) {
	opt, err := withDefaults(opt)
	if err != nil {
		return nil, err
	}
	kinds := map[Kind]bool{}
	for _, k := range opt.Kinds {
		kinds[k] = true
	}
	// The sites of findings, by cohort index, as the cohort streams by.
	var sites [][]Site
	mark := func(m store.Mark) {
		if !kinds[KindFinding] {
			return
		}
		for int(m.Trace) >= len(sites) {
			sites = append(sites, nil)
		}
		sites[m.Trace] = append(sites[m.Trace], Site{Mode: m.Mode, Step: int(m.Step)})
	}
	c, err := r.LoadCohort(ctx, opt.IDs, opt.Sources, mark)
	if err != nil {
		return nil, fmt.Errorf("reading the cohort: %w", err)
	}
	d := &discovery{cohort: c, failed: make([]bool, len(c.Traces)), aliases: opt.Aliases, canonical: map[string]string{}}
	res := &Result{Kinds: opt.Kinds, Traces: len(c.Traces), MinFailed: opt.MinFailed, LastCalls: opt.LastCalls,
		Similarity: opt.Similarity, Rule: opt.Rule, Patterns: []*Pattern{}}
	var ids []string
	index := map[string]int32{}
	for i := range c.Traces {
		t := &c.Traces[i]
		switch outcomeOf(c.Outcome(t)) {
		case failed:
			d.failed[i] = true
			d.failedN++
		case succeeded:
			d.succeededN++
		default:
			res.Undecided++
			continue
		}
		id := c.ID(t)
		ids = append(ids, id)
		index[id] = int32(i)
	}
	res.Failed, res.Succeeded = d.failedN, d.succeededN

	sigs := map[string]*signatureStats{}
	pick := store.StepPick{Failed: kinds[KindError], LastCalls: opt.LastCalls, Last: kinds[KindEnding], TextLimit: textLimit}
	if !kinds[KindEnding] {
		pick.LastCalls = 0
	}
	if kinds[KindFinding] {
		pick.At = func(id string) []int {
			var at []int
			if i := index[id]; int(i) < len(sites) {
				for _, s := range sites[i] {
					if s.Step >= 0 {
						at = append(at, s.Step)
					}
				}
			}
			return at
		}
	}
	sopt := SignatureOptions{Kinds: kinds, LastCalls: opt.LastCalls}
	done := 0
	err = r.PickSteps(ctx, ids, pick, func(p store.PickedSteps) error {
		i := index[p.ID]
		var traceSites []Site
		if int(i) < len(sites) {
			traceSites = sites[i]
		}
		for _, o := range Signatures(p.Steps, traceSites, sopt) {
			d.add(sigs, i, o)
		}
		if done++; opt.Progress != nil && done%store.PickBatchSize == 0 {
			opt.Progress(done, len(ids))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if opt.Progress != nil && done%store.PickBatchSize != 0 {
		opt.Progress(done, len(ids))
	}
	res.Signatures = len(sigs)
	all := make([]*signatureStats, 0, len(sigs))
	for _, s := range sigs {
		all = append(all, s)
	}
	for _, group := range cluster(all, ClusterOptions{Similarity: opt.Similarity, MaxLeaders: opt.MaxLeaders}) {
		failedK := 0
		for _, s := range group {
			failedK += s.failed
		}
		if failedK < opt.MinFailed {
			continue // merged signatures can only share traces, never add
		}
		if p := d.patternOf(group); p.Failed.K >= opt.MinFailed {
			res.Patterns = append(res.Patterns, p)
		}
	}
	res.Patterns = fold(res.Patterns)
	res.Tested = len(res.Patterns)
	rank(res.Patterns, opt.Rule)
	if opt.Limit > 0 && len(res.Patterns) > opt.Limit {
		res.Patterns = res.Patterns[:opt.Limit]
	}
	return res, nil
}

// withDefaults fills in the defaults of Options and checks them.
func withDefaults(opt Options) (Options, error) {
	if opt.Kinds == nil {
		opt.Kinds = slices.Clone(Kinds)
	}
	for _, k := range opt.Kinds {
		if !slices.Contains(Kinds, k) {
			return opt, fmt.Errorf("no kind of signature %q: use %v", k, Kinds)
		}
	}
	sort.Slice(opt.Kinds, func(i, j int) bool { return slices.Index(Kinds, opt.Kinds[i]) < slices.Index(Kinds, opt.Kinds[j]) })
	opt.Kinds = slices.Compact(opt.Kinds)
	if opt.Sources == nil {
		opt.Sources = []string{detect.Source}
	}
	opt.MinFailed = max(opt.MinFailed, 1)
	if opt.LastCalls == 0 {
		opt.LastCalls = DefaultLastCalls
	}
	if opt.Similarity == 0 {
		opt.Similarity = DefaultSimilarity
	}
	if opt.Similarity < 0 || opt.Similarity > 1 {
		return opt, errors.New("the similarity must be between 0 and 1")
	}
	if opt.MaxLeaders == 0 {
		opt.MaxLeaders = DefaultMaxLeaders
	}
	if opt.Rule == (analyze.Rule{}) {
		opt.Rule = analyze.DefaultRule
	}
	return opt, nil
}

func outcomeOf(o *trace.Outcome) int8 {
	switch {
	case o == nil || o.Success == nil:
		return undecided
	case *o.Success:
		return succeeded
	}
	return failed
}

// add records that trace i shows a signature (once: Signatures gives each
// of a trace's signatures once).
func (d *discovery) add(sigs map[string]*signatureStats, i int32, o Occurrence) {
	name := o.Signature.String()
	s := sigs[name]
	if s == nil {
		s = &signatureStats{sig: o.Signature, name: name, tokens: signatureTokens(o.Signature)}
		sigs[name] = s
	}
	s.traces = append(s.traces, i)
	s.steps = append(s.steps, int32(o.Step))
	if d.failed[i] {
		s.failed++
	}
	// A few quotes from failed traces and a few from successful ones.
	n := 0
	for _, q := range s.quotes {
		if d.failed[q.trace] == d.failed[i] {
			n++
		}
	}
	if n < maxQuotes && o.Quote != "" {
		s.quotes = append(s.quotes, quoteAt{trace: i, step: int32(o.Step), text: o.Quote})
	}
}
