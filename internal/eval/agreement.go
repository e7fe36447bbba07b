package eval

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/stats"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// Agreement compares an annotation source with reference labels, mode by
// mode, as `faultline eval` prints it. The source plays the predictor and
// the labels the truth: precision is the share of the source's present
// verdicts the labels confirm, recall the share of the labels' present ones
// the source found. A trace and mode is compared when both sides decided it
// (present or absent); unsure or one-sided pairs are left out and counted.
// Precision, recall and accuracy are proportions and take Wilson's score
// interval, which keeps its width when a handful of traces all agree (a
// bootstrap of them would collapse to a point); the pooled row's treats
// its trace and mode pairs as independent. F1, kappa and the means over
// modes take a percentile bootstrap over traces.
type Agreement struct {
	Source Side `json:"source"`
	Labels Side `json:"labels"`
	// Traces is how many traces have at least one compared pair.
	Traces    int       `json:"traces"`
	Bootstrap Bootstrap `json:"bootstrap"`
	// Within is the tolerance, in steps, of the location's within count.
	Within int   `json:"within"`
	Modes  []Row `json:"modes"` // modes compared on at least one trace, in taxonomy order
	// System holds faultline's system codes (SYS-1 …: harness and
	// infrastructure failures) compared on at least one trace. They are not
	// MAST modes and stay out of Micro and Macro.
	System []Row `json:"system"`
	// Merged counts FM-3.2 and FM-3.3 as one mode, since sources confuse
	// them (MAST's own judge prompt swaps their meanings): present when
	// either is. Nil when neither was compared.
	Merged *Row `json:"merged"`
	// Micro pools the pairs of every mode in Modes (not Merged) into one
	// table; Macro averages each metric over the modes where it is defined.
	Micro *Row   `json:"micro"`
	Macro *Macro `json:"macro"`
}

// Side describes one side of the comparison.
type Side struct {
	Name    string   `json:"name"`
	Detail  string   `json:"detail,omitempty"`
	Sources []string `json:"sources"`
	Traces  int      `json:"traces"`  // traces it labels
	Decided int      `json:"decided"` // trace and mode pairs it says present or absent
	Implied int      `json:"implied"` // of which absences inferred from silence
	Unsure  int      `json:"unsure"`
}

// Bootstrap says how the bootstrap intervals (of F1, kappa and the means
// over modes) were made: percentile intervals from resampling traces with
// replacement. The proportions take Wilson's interval, which needs none.
type Bootstrap struct {
	Replicates int     `json:"replicates"` // 0: no intervals, Wilson's either
	Seed       uint64  `json:"seed"`
	Level      float64 `json:"level"`
}

// Row is the agreement on one mode (or pooled modes).
type Row struct {
	Mode  string `json:"mode"`
	Name  string `json:"name"`
	Pairs int    `json:"pairs"` // traces compared
	// Excluded counts traces where one side decided the mode and the other
	// did not, or either was unsure.
	Excluded int `json:"excluded"`
	TP       int `json:"tp"`
	FP       int `json:"fp"`
	FN       int `json:"fn"`
	TN       int `json:"tn"`
	Metrics
	// Location is how well the source places true positives, when the
	// labels cite steps for some of them; nil otherwise.
	Location *Location `json:"location"`
}

// Macro is the unweighted mean of each metric over the modes where the
// metric is defined, so that rare modes weigh as much as common ones.
type Macro struct {
	Modes int `json:"modes"` // modes compared; a metric averages those where it is defined
	Metrics
}

// Metrics are the agreement statistics of a row.
type Metrics struct {
	Accuracy  Metric `json:"accuracy"`
	Precision Metric `json:"precision"`
	Recall    Metric `json:"recall"`
	F1        Metric `json:"f1"`
	Kappa     Metric `json:"kappa"`
}

// metrics lists the fields of m in the order of measures.
func (m *Metrics) metrics() [nMeasures]*Metric {
	return [nMeasures]*Metric{&m.Accuracy, &m.Precision, &m.Recall, &m.F1, &m.Kappa}
}

// measures computes, in the order of Metrics.metrics, each statistic of a table.
var measures = [...]func(stats.Confusion) (float64, bool){
	stats.Confusion.Accuracy, stats.Confusion.Precision, stats.Confusion.Recall, stats.Confusion.F1, stats.Confusion.Kappa,
}

const nMeasures = len(measures)

// proportions gives, for each measure that is a proportion, its successes
// and trials in a table, which Wilson's interval is computed from; nil for
// F1 and kappa.
var proportions = [nMeasures]func(stats.Confusion) (k, n int){
	func(t stats.Confusion) (int, int) { return t.TP + t.TN, t.N() },
	func(t stats.Confusion) (int, int) { return t.TP, t.TP + t.FP },
	func(t stats.Confusion) (int, int) { return t.TP, t.TP + t.FN },
	nil, nil,
}

// Metric is one statistic, rounded to 4 decimals, with its 95% interval.
// Value is nil when the statistic is undefined on the data (a zero
// denominator: no positives, or kappa when both sides are constant), Lo
// and Hi when there is no interval.
type Metric struct {
	Value *float64 `json:"value"`
	Lo    *float64 `json:"lo"`
	Hi    *float64 `json:"hi"`
	// Interval names how Lo and Hi were made: IntervalWilson for a
	// proportion (accuracy, precision, recall, a share), IntervalBootstrap
	// for the rest (F1, kappa, means over modes); "" when there is none.
	Interval string `json:"interval,omitempty"`
	// Degenerate says the bootstrap gave no interval because its 2.5th and
	// 97.5th percentiles coincide: the resamples hold no disagreement to
	// vary (every trace agrees, say), which says nothing of how exact the
	// value is. Lo and Hi are then nil rather than a point posing as an
	// interval.
	Degenerate bool `json:"degenerate,omitempty"`
}

// How a Metric's interval was made.
const (
	IntervalWilson    = "wilson"
	IntervalBootstrap = "bootstrap"
)

// DefaultReplicates is how many bootstrap resamples an agreement is
// computed with unless asked otherwise, by faultline eval and faultline
// serve alike, so that the same comparison shows the same intervals in
// both.
const DefaultReplicates = 2000

// DefaultOptions are the agreement settings faultline eval and faultline
// serve share.
var DefaultOptions = AgreementOptions{Replicates: DefaultReplicates, Seed: 1, Within: 1}

// IntervalsText says in a sentence how the intervals of an agreement were
// made, for what prints or shows one.
func (b Bootstrap) IntervalsText() string {
	if b.Replicates <= 0 {
		return "no intervals (none asked for)"
	}
	return fmt.Sprintf("%.0f%% intervals: Wilson score intervals for precision, recall and accuracy; "+
		"percentile bootstrap over traces for F1, kappa and the means over modes (%d resamples, seed %d)", 100*b.Level, b.Replicates, b.Seed)
}

// setWilson sets m's interval to the Wilson score interval of k in n.
func (m *Metric) setWilson(k, n int) {
	if iv, ok := stats.Wilson(k, n, stats.Z95); ok {
		m.Lo, m.Hi, m.Interval = stats.Round4(iv.Lo), stats.Round4(iv.Hi), IntervalWilson
	}
}

// setBootstrap sets m's interval to the percentile interval of the
// resampled values, or marks it degenerate when that is a single point.
func (m *Metric) setBootstrap(samples []float64) {
	iv, ok := stats.PercentileInterval(samples, stats.Level)
	if !ok {
		return
	}
	m.Interval = IntervalBootstrap
	if iv.Lo == iv.Hi {
		m.Degenerate = true
		return
	}
	m.Lo, m.Hi = stats.Round4(iv.Lo), stats.Round4(iv.Hi)
}

// Location counts, among true positives whose label cites steps, those
// where the source cites one of the same steps (Exact) or a step at most
// Agreement.Within away from one (Within). A source citing no step misses.
type Location struct {
	Pairs  int `json:"pairs"`
	Exact  int `json:"exact"`
	Within int `json:"within"`
}

// AgreementOptions tune Agree.
type AgreementOptions struct {
	Replicates int    // bootstrap resamples; 0 for no intervals at all (point estimates)
	Seed       uint64 // of the resampling, so output is reproducible
	Within     int    // location tolerance, in steps
}

// The merged row's mode code and name.
const (
	mergedCode = "FM-3.2+FM-3.3"
	mergedName = "No, incomplete or incorrect verification"
)

// cell is how one trace counts in one mode's table.
type cell int8

const (
	unpaired cell = iota // no pair: one side silent or unsure
	tp
	fp
	fn
	tn
)

func cellOf(src, ref trace.Verdict) cell {
	switch {
	case src == trace.Present && ref == trace.Present:
		return tp
	case src == trace.Present && ref == trace.Absent:
		return fp
	case src == trace.Absent && ref == trace.Present:
		return fn
	case src == trace.Absent && ref == trace.Absent:
		return tn
	}
	return unpaired
}

func (c cell) add(t *stats.Confusion, w int) {
	switch c {
	case tp:
		t.TP += w
	case fp:
		t.FP += w
	case fn:
		t.FN += w
	case tn:
		t.TN += w
	}
}

// column is one mode's comparison across the traces.
type column struct {
	code, name string
	merged     bool
	system     bool   // a system code, outside the MAST pools
	cells      []cell // by trace
	excluded   int
	loc        Location
	located    bool // some true positive's label cites steps
}

// Agree compares the annotation source src with the reference labels ref.
func Agree(src, ref *labels.Set, opt AgreementOptions) *Agreement {
	return AgreeLabels(Index(src), Index(ref), opt)
}

// AgreeAndConflicts is Agree and Conflicts of the same two sides, indexed
// once (as StoredLabelSets reads them): on a large store, indexing a side
// costs about as much as either comparison.
func AgreeAndConflicts(src, ref *Labels, opt AgreementOptions) (*Agreement, []Conflict) {
	return AgreeLabels(src, ref, opt), conflicts(src, ref)
}

// AgreeLabels is Agree of two sides already indexed, such as a stored
// source as StoredLabelSets reads it.
func AgreeLabels(sx, rx *Labels, opt AgreementOptions) *Agreement {
	// The traces both sides label, in id order: rows of each side.
	var both [][2]int32
	for _, s := range sx.sortedRows() {
		if r, ok := rx.rowOf(sx.ids[s]); ok {
			both = append(both, [2]int32{s, r})
		}
	}

	var cols []*column
	for _, m := range taxonomy.MAST.Modes {
		cols = append(cols, &column{code: m.Code, name: m.Name})
	}
	cols = append(cols, &column{code: mergedCode, name: mergedName, merged: true})
	for _, m := range taxonomy.System.Modes {
		cols = append(cols, &column{code: m.Code, name: m.Name, system: true})
	}
	// Each column's columns in the two indexes: the merged one reads two.
	modes := func(c *column) []string {
		if c.merged {
			return []string{"FM-3.2", "FM-3.3"}
		}
		return []string{c.code}
	}
	type sides struct{ s, r []int32 }
	at := make([]sides, len(cols))
	for j, c := range cols {
		for _, m := range modes(c) {
			at[j].s = append(at[j].s, sx.column(m))
			at[j].r = append(at[j].r, rx.column(m))
		}
	}
	for _, b := range both {
		for j, c := range cols {
			var sl, rl labels.ModeLabel
			if c.merged {
				sl = mergeVerification(sx.at(b[0], at[j].s[0]), sx.at(b[0], at[j].s[1]))
				rl = mergeVerification(rx.at(b[1], at[j].r[0]), rx.at(b[1], at[j].r[1]))
			} else {
				sl, rl = sx.at(b[0], at[j].s[0]), rx.at(b[1], at[j].r[0])
			}
			c.compare(sl, rl, opt.Within)
		}
	}
	// Keep the modes compared somewhere, and the traces that take part.
	cols = slices.DeleteFunc(cols, func(c *column) bool { return !slices.ContainsFunc(c.cells, func(x cell) bool { return x != unpaired }) })
	g := &grid{cols: cols}
	row := make([]cell, len(cols))
	for i := range both {
		for j, c := range cols {
			row[j] = c.cells[i]
		}
		if slices.ContainsFunc(row, func(x cell) bool { return x != unpaired }) {
			g.add(row)
		}
	}

	a := &Agreement{
		Source:    sx.Describe(),
		Labels:    rx.Describe(),
		Traces:    len(g.unit),
		Bootstrap: Bootstrap{Replicates: opt.Replicates, Seed: opt.Seed, Level: stats.Level},
		Within:    opt.Within,
		Modes:     []Row{},
		System:    []Row{},
	}
	if len(cols) == 0 {
		return a
	}
	tables := g.tables(g.counts)
	point := g.estimates(tables)
	samples := g.bootstrap(opt)

	var micro stats.Confusion
	var microLoc Location
	located := false
	for j, c := range cols {
		row := Row{Mode: c.code, Name: c.name, Pairs: tables[j].N(), Excluded: c.excluded,
			TP: tables[j].TP, FP: tables[j].FP, FN: tables[j].FN, TN: tables[j].TN}
		row.fill(point[j], samples[j], &tables[j], opt.Replicates > 0)
		if c.located {
			loc := c.loc
			row.Location = &loc
		}
		if c.merged {
			a.Merged = &row
			continue
		}
		if c.system {
			a.System = append(a.System, row)
			continue
		}
		a.Modes = append(a.Modes, row)
		micro = micro.Add(tables[j])
		microLoc = Location{Pairs: microLoc.Pairs + c.loc.Pairs, Exact: microLoc.Exact + c.loc.Exact, Within: microLoc.Within + c.loc.Within}
		located = located || c.located
	}
	if len(a.Modes) == 0 {
		return a // only the merged row: nothing to pool
	}
	a.Micro = &Row{Mode: "all", Name: "all modes, pooled", Pairs: micro.N(), TP: micro.TP, FP: micro.FP, FN: micro.FN, TN: micro.TN}
	for _, c := range cols {
		if c.pooled() {
			a.Micro.Excluded += c.excluded
		}
	}
	a.Micro.fill(point[len(cols)], samples[len(cols)], &micro, opt.Replicates > 0)
	if located {
		a.Micro.Location = &microLoc
	}
	a.Macro = &Macro{Modes: len(a.Modes)}
	a.Macro.fill(point[len(cols)+1], samples[len(cols)+1], nil, opt.Replicates > 0)
	return a
}

// compare adds one trace's pair to the column.
func (c *column) compare(s, r labels.ModeLabel, within int) {
	x := cellOf(s.Verdict, r.Verdict)
	c.cells = append(c.cells, x)
	if x == unpaired && (s.Verdict != "" || r.Verdict != "") {
		c.excluded++
	}
	if x != tp || len(r.Steps) == 0 {
		return
	}
	c.located = true
	c.loc.Pairs++
	d := nearest(s.Steps, r.Steps)
	if d == 0 {
		c.loc.Exact++
	}
	if d >= 0 && d <= within {
		c.loc.Within++
	}
}

// nearest is the smallest distance between a step of a and a step of b,
// or -1 when either cites none.
func nearest(a, b []int) int {
	best := -1
	for _, x := range a {
		for _, y := range b {
			d := x - y
			if d < 0 {
				d = -d
			}
			if best < 0 || d < best {
				best = d
			}
		}
	}
	return best
}

// mergeVerification reads FM-3.2 and FM-3.3 of one trace as one mode.
func mergeVerification(a, b labels.ModeLabel) labels.ModeLabel {
	steps := slices.Concat(a.Steps, b.Steps)
	slices.Sort(steps)
	return labels.ModeLabel{Verdict: combine(a.Verdict, b.Verdict), Steps: slices.Compact(steps)}
}

// combine pools two verdicts on one mode: present if either says present;
// otherwise unsure if either is; otherwise absent if either decided it.
// Pooling sources and merging modes both read "the mode is there" as "one
// of them says so".
func combine(a, b trace.Verdict) trace.Verdict {
	rank := func(v trace.Verdict) int {
		switch v {
		case trace.Present:
			return 3
		case trace.Unsure:
			return 2
		case trace.Absent:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// grid holds, for every trace compared (a unit of resampling) and every
// column, how the trace counts in the column's table. Traces that count
// alike share a pattern: a table is the sum over the patterns, each
// weighted by the draws of its traces, which on a hundred thousand traces
// and a thousand resamples is far less work than a sum over the traces.
type grid struct {
	cols     []*column
	patterns [][]cell         // distinct rows of cells, by column
	index    map[string]int32 // a row's cells as a string → its pattern
	unit     []int32          // the pattern of each trace
	counts   []int            // how many traces each pattern has
}

// add appends a trace whose cells are row.
func (g *grid) add(row []cell) {
	if g.index == nil {
		g.index = map[string]int32{}
	}
	key := make([]byte, len(row))
	for j, x := range row {
		key[j] = byte(x)
	}
	p, ok := g.index[string(key)]
	if !ok {
		p = int32(len(g.patterns))
		g.index[string(key)] = p
		g.patterns = append(g.patterns, slices.Clone(row))
		g.counts = append(g.counts, 0)
	}
	g.unit = append(g.unit, p)
	g.counts[p]++
}

// tables counts each column's table with the patterns weighted by w (how
// many times a resample drew their traces).
func (g *grid) tables(w []int) []stats.Confusion {
	out := make([]stats.Confusion, len(g.cols))
	for p, row := range g.patterns {
		if w[p] == 0 {
			continue
		}
		for j, x := range row {
			x.add(&out[j], w[p])
		}
	}
	return out
}

// estimate is a statistic that may be undefined.
type estimate struct {
	v  float64
	ok bool
}

// pooled reports whether the column counts in the micro and macro rows: a
// MAST mode, not the merged verification row (it counts FM-3.2 and FM-3.3
// again) nor a system code.
func (c *column) pooled() bool { return !c.merged && !c.system }

// estimates computes every measure of every column, then of the pooled
// table (micro) and the mean over modes (macro), over the pooled columns.
func (g *grid) estimates(tables []stats.Confusion) [][nMeasures]estimate {
	out := make([][nMeasures]estimate, len(g.cols)+2)
	var micro stats.Confusion
	var sum [nMeasures]float64
	var n [nMeasures]int
	for j, t := range tables {
		for k, f := range measures {
			v, ok := f(t)
			out[j][k] = estimate{v, ok}
			if ok && g.cols[j].pooled() {
				sum[k] += v
				n[k]++
			}
		}
		if g.cols[j].pooled() {
			micro = micro.Add(t)
		}
	}
	for k, f := range measures {
		v, ok := f(micro)
		out[len(g.cols)][k] = estimate{v, ok}
		if n[k] > 0 {
			out[len(g.cols)+1][k] = estimate{sum[k] / float64(n[k]), true}
		}
	}
	return out
}

// bootstrap returns the resampled values of every estimate that takes a
// bootstrap interval, in the layout of estimates: F1 and kappa of each
// column and of the pooled table, and every mean over modes (the
// proportions of a table take Wilson's interval instead). Resamples in
// which a statistic is undefined (a mode with no positives drawn) are left
// out of its values.
func (g *grid) bootstrap(opt AgreementOptions) [][nMeasures][]float64 {
	samples := make([][nMeasures][]float64, len(g.cols)+2)
	if opt.Replicates <= 0 {
		return samples
	}
	macro := len(g.cols) + 1
	stats.ResampleGroups(g.unit, len(g.patterns), opt.Replicates, opt.Seed, func(w []int) {
		for i, est := range g.estimates(g.tables(w)) {
			for k, e := range est {
				if e.ok && (i == macro || proportions[k] == nil) {
					samples[i][k] = append(samples[i][k], e.v)
				}
			}
		}
	})
	return samples
}

// fill sets the metrics from their estimates and, when intervals are asked
// for, the proportions of table t with Wilson's interval, the others (and
// all of them when t is nil, for the means over modes) with the bootstrap
// interval of their resampled values.
func (m *Metrics) fill(est [nMeasures]estimate, samples [nMeasures][]float64, t *stats.Confusion, intervals bool) {
	for k, f := range m.metrics() {
		if !est[k].ok {
			continue
		}
		f.Value = stats.Round4(est[k].v)
		switch {
		case !intervals:
		case t != nil && proportions[k] != nil:
			f.setWilson(proportions[k](*t))
		default:
			f.setBootstrap(samples[k])
		}
	}
}

// detectorModes lists the MAST modes and system codes the current
// detectors look for.
func detectorModes() []string {
	var modes []string
	for _, d := range detect.All {
		if _, _, ok := taxonomy.Lookup(d.Mode); ok && !slices.Contains(modes, d.Mode) {
			modes = append(modes, d.Mode)
		}
	}
	return modes
}

// VerdictSource is what reading a stored source as labels needs from a
// store.
type VerdictSource interface {
	// TraceVerdicts calls fn with what each of the given traces that is
	// stored holds (its detector set, its sources, its findings with a
	// mode), in id order; fn must not keep what it is given.
	TraceVerdicts(ctx context.Context, ids []string, fn func(store.TraceVerdicts) error) error
}

// StoredLabels reads what the annotation sources selected by source (as
// store.MatchSource selects them: "mad" takes every mad:… source) stored on
// the given traces, as labels. Several sources are pooled: a mode is
// present when any says so. A stored source's silence is no verdict,
// except the detectors': detectors only report what they find, so on the
// traces the current detector set ran on (the store's detected_with), a
// mode one of them looks for and none reported is absent. Detector
// findings of another detector set are left out, as are modes outside MAST
// and the system codes. The labels come trace by trace, in id order.
func StoredLabels(ctx context.Context, st VerdictSource, source string, ids []string) (*labels.Set, error) {
	sets, err := StoredLabelSets(ctx, st, []string{source}, ids)
	if err != nil {
		return nil, err
	}
	return sets[0].Set(), nil
}

// StoredLabelSets reads several sources as StoredLabels reads one, in one
// pass over the store, on the traces every one of them can be compared
// on: those each source but the detectors annotated (all the given ones
// when nil). A source that annotated none of them is an error naming it.
// The labels come indexed, as the comparisons read them.
func StoredLabelSets(ctx context.Context, st VerdictSource, sources []string, ids []string) ([]*Labels, error) {
	readers := make([]*labelReader, len(sources))
	for i, source := range sources {
		readers[i] = newLabelReader(source, len(ids))
	}
	var annotators []string
	for _, source := range sources {
		if !store.MatchSource(detect.Source, []string{source}) {
			annotators = append(annotators, source)
		}
	}
	all := map[string]bool{}
	err := st.TraceVerdicts(ctx, ids, func(t store.TraceVerdicts) error {
		for _, src := range t.Sources {
			all[src] = true
		}
		for _, a := range annotators {
			if !slices.ContainsFunc(t.Sources, func(src string) bool { return store.MatchSource(src, []string{a}) }) {
				return nil
			}
		}
		for _, r := range readers {
			r.add(t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sets := make([]*Labels, len(readers))
	for i, r := range readers {
		if sets[i], err = r.finish(all); err != nil {
			return nil, err
		}
	}
	return sets, nil
}

// labelReader builds one source's labels, trace by trace.
type labelReader struct {
	selected  []string
	detectors bool // whether the source takes in the detectors
	version   string
	modes     []string        // the detectors' modes
	matched   map[string]bool // whether a source, as stored, is one selected
	// cols is the column in x of a mode as stored, -1 for one neither MAST
	// nor a system code; modeCols those of the detectors' modes, once
	// needed.
	cols     map[string]int32
	modeCols []int32
	covered  int
	x        *Labels
	// The trace being read: whether each of its sources is selected, its
	// labels, their columns, and by column 1 + the index of its label
	// there (0 for none), so that a verdict finds its label at once.
	selectedHere []bool
	trace        []labels.ModeLabel
	traceCols    []int32
	at           []int32
}

// newLabelReader starts reading source on about traces traces.
func newLabelReader(source string, traces int) *labelReader {
	selected := []string{source}
	return &labelReader{
		selected:  selected,
		detectors: store.MatchSource(detect.Source, selected),
		version:   detect.Version(detect.All),
		modes:     detectorModes(),
		matched:   map[string]bool{},
		cols:      map[string]int32{},
		// Sized for every trace, which a judge or a labeller labels: on a
		// large store, growing the table step by step costs more than
		// reading the findings.
		x: newLabels(source, traces),
	}
}

// add takes in what one trace holds.
func (r *labelReader) add(t store.TraceVerdicts) {
	r.selectedHere = r.selectedHere[:0]
	for _, src := range t.Sources {
		ok, seen := r.matched[src]
		if !seen {
			ok = store.MatchSource(src, r.selected)
			r.matched[src] = ok
		}
		r.selectedHere = append(r.selectedHere, ok)
	}
	cover := r.detectors && t.DetectedWith == r.version
	if cover {
		r.covered++
	}
	r.trace, r.traceCols = r.trace[:0], r.traceCols[:0]
	for _, v := range t.Verdicts {
		if !r.selects(t.Sources, v.Source) {
			continue
		}
		col, seen := r.cols[v.Mode]
		if !seen {
			col = -1
			if _, _, ok := taxonomy.Lookup(v.Mode); ok {
				col = r.x.addColumn(v.Mode)
			}
			r.cols[v.Mode] = col
		}
		if col >= 0 && (v.Source != detect.Source || cover) {
			r.put(t.Trace, col, v.Mode, v.Verdict, v.Steps, false)
		}
	}
	if cover {
		if r.modeCols == nil {
			for _, m := range r.modes {
				r.modeCols = append(r.modeCols, r.x.addColumn(m))
			}
		}
		for i, col := range r.modeCols {
			if r.label(col) < 0 {
				r.put(t.Trace, col, r.modes[i], trace.Absent, nil, true)
			}
		}
	}
	if len(r.trace) == 0 {
		return
	}
	row := r.x.row(t.Trace)
	for i, l := range r.trace {
		slices.Sort(l.Steps)
		l.Steps = slices.Compact(l.Steps)
		r.x.addAt(row, r.traceCols[i], l)
		r.at[r.traceCols[i]] = 0
	}
}

// selects says whether a verdict's source, one of the trace's sources, is
// one the reader selects.
func (r *labelReader) selects(sources []string, src string) bool {
	for i, s := range sources {
		if s == src {
			return r.selectedHere[i]
		}
	}
	return store.MatchSource(src, r.selected)
}

// label is the index among the trace's labels of the one in a column, -1
// for none.
func (r *labelReader) label(col int32) int {
	if int(col) >= len(r.at) {
		return -1
	}
	return int(r.at[col]) - 1
}

// put adds a verdict on a mode to the trace's labels: a mode several
// verdicts decide takes their combination, and the steps of those that
// say present.
func (r *labelReader) put(id string, col int32, mode string, v trace.Verdict, steps []int, implied bool) {
	i := r.label(col)
	if i < 0 {
		for int(col) >= len(r.at) {
			r.at = append(r.at, 0)
		}
		i = len(r.trace)
		r.trace = append(r.trace, labels.ModeLabel{Trace: id, Mode: mode, Verdict: v, Implied: implied})
		r.traceCols = append(r.traceCols, col)
		r.at[col] = int32(i) + 1
	}
	l := &r.trace[i]
	l.Verdict = combine(l.Verdict, v)
	if v == trace.Present {
		l.Steps = append(l.Steps, steps...)
	}
}

// finish returns the labels read, or an error naming the sources there
// (all) when the source annotated none of the traces.
func (r *labelReader) finish(all map[string]bool) (*Labels, error) {
	side := &r.x.side
	for src, ok := range r.matched {
		if ok {
			side.Sources = append(side.Sources, src)
		}
	}
	if r.covered > 0 && !r.matched[detect.Source] {
		side.Sources = append(side.Sources, detect.Source)
	}
	sort.Strings(side.Sources)
	if len(side.Sources) == 0 {
		there := "none"
		if len(all) > 0 {
			there = strings.Join(slices.Sorted(maps.Keys(all)), ", ")
		}
		return nil, fmt.Errorf("no annotations of source %q on these traces (sources there: %s)", side.Name, there)
	}
	if r.covered > 0 {
		side.Detail = fmt.Sprintf("detectors report only what they find: their silence counts as absent for %s on the %d traces they ran on", strings.Join(r.modes, ", "), r.covered)
	}
	r.x.finish()
	return r.x, nil
}
