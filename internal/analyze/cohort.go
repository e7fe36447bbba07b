// Package analyze turns a cohort of stored traces into statistics: who was
// run, how it went, which failure modes were found, which of them go with
// failure, how they follow one another and what to do about them, per group.
package analyze

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/stats"
	"github.com/faultline/faultline/taxonomy"
)

// ErrCompare is a comparison that cannot be made: not two groups, or a
// group the traces do not have.
var ErrCompare = errors.New("cannot compare")

// ReportSchema names the JSON form of a cohort report and its version.
// Within a version fields are only ever added; removing or changing the
// meaning of one makes a new version.
const ReportSchema = "faultline-report/1"

// Groupings a report can be made by.
var Groupings = []string{"model", "system", "scenario"}

// ReportOptions say what a cohort report covers.
type ReportOptions struct {
	By string // model (default), system or scenario
	// Sources selects the annotation sources whose findings count, as
	// store.MatchSource selects them; empty selects every source.
	Sources []string
	// IDs restricts the report to these traces; nil means every stored trace.
	IDs []string
	// Compare names two groups to set side by side; the report then covers
	// those two only.
	Compare []string
	Rule    Rule
	// Aliases names models canonically: a report by model groups the ways
	// one model is written together. nil applies the built-in rules alone.
	Aliases store.ModelAliases
	// CodeNames names the codes of the user's own rules (see Custom).
	CodeNames map[string]string
}

// Report is a cohort report: its JSON form is versioned by Schema.
type Report struct {
	Schema string `json:"schema"`
	By     string `json:"by"`
	// SourceSelection is the selection the report was made with (empty:
	// every source); Sources the selected sources found on the traces.
	SourceSelection []string `json:"source_selection"`
	Sources         []string `json:"sources"`
	Traces          int      `json:"traces"`
	Rule            Rule     `json:"rule"`
	// Tests counts the p-values in the report, over which every q-value is
	// adjusted.
	Tests  int      `json:"tests"`
	Groups []*Group `json:"groups"`
	// All is the whole cohort as one group.
	All     *Group      `json:"all"`
	Compare *Comparison `json:"compare,omitempty"`
}

// HasOutcomes says whether any trace of the cohort has a decided outcome:
// without one, nothing can be set against success or failure.
func (r *Report) HasOutcomes() bool { return r.All != nil && r.All.Succeeded+r.All.Failed > 0 }

// Group holds every figure of the report for one group of traces.
type Group struct {
	Name string `json:"name"`
	// AlsoWrittenAs lists the names as traces write them that the group's
	// canonical name merged (openai/gpt-oss-120b in gpt-oss-120b), sorted;
	// only in a report by model.
	AlsoWrittenAs []string `json:"also_written_as,omitempty"`
	Traces        int      `json:"traces"`
	Succeeded     int      `json:"succeeded"`
	Failed        int      `json:"failed"`
	Unknown       int      `json:"unknown"` // no decided outcome
	// UnknownWhy counts the unknown traces a scorer left undecided, by the
	// status it recorded ("not a diagnosis", "unreadable answer").
	UnknownWhy map[string]int `json:"unknown_why,omitempty"`
	// SuccessRate is over the traces with a decided outcome.
	SuccessRate Proportion `json:"success_rate"`
	// Metric is the mean score of the primary outcomes that have one; nil
	// when none has.
	Metric *OutcomeMetric `json:"metric"`
	// Annotated gives, for each source in Report.Sources, the traces it
	// annotated: any finding, of any verdict, or for detectors a run of the
	// detector set.
	Annotated []SourceShare `json:"annotated"`
	// WithModes counts traces with at least one MAST mode.
	WithModes int `json:"with_modes"`
	// Modes has each MAST mode present in the group, in taxonomy order.
	Modes         []*ModeStats     `json:"modes"`
	Density       Density          `json:"density"`
	Pairs         []Pair           `json:"pairs"`
	Cascades      Cascades         `json:"cascades"`
	Interventions []Recommendation `json:"interventions"`
	System        SystemFailures   `json:"system"`
	// Custom has each code of the user's own rules (neither MAST nor
	// system) found in the group, most traces first. Such codes are the
	// team's own failures: they count neither as MAST modes nor as the
	// harness's.
	Custom []CustomCode `json:"custom"`

	failedDensity stats.Running // for comparisons
}

// Mode returns the figures of a MAST mode in the group: those of a mode
// no trace of the group shows are zero (and its name empty).
func (g *Group) Mode(code string) *ModeStats {
	for _, m := range g.Modes {
		if m.Mode == code {
			return m
		}
	}
	return &ModeStats{Mode: code, All: Proportion{N: g.Traces}}
}

// SourceShare is the traces of a group that one source annotated.
type SourceShare struct {
	Source string `json:"source"`
	Proportion
}

// OutcomeMetric is the mean of the primary outcomes' scores.
type OutcomeMetric struct {
	Name string `json:"name"` // the metric, or several joined by ", "
	Mean
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// Proportion is k of n with its Wilson 95% interval. Only k and n are
// stored; the JSON form adds share, lo and hi (null when n is 0).
type Proportion struct {
	K int `json:"k"`
	N int `json:"n"`
}

// Share is k/n; undefined when n is 0.
func (p Proportion) Share() (float64, bool) {
	if p.N == 0 {
		return 0, false
	}
	return float64(p.K) / float64(p.N), true
}

// Interval is the Wilson 95% interval of the share.
func (p Proportion) Interval() (stats.Interval, bool) { return stats.Wilson(p.K, p.N, stats.Z95) }

// MarshalJSON writes k, n, share, lo and hi.
func (p Proportion) MarshalJSON() ([]byte, error) {
	share, ok := p.Share()
	iv, _ := p.Interval()
	if !ok {
		return fmt.Appendf(nil, `{"k":%d,"n":%d,"share":null,"lo":null,"hi":null}`, p.K, p.N), nil
	}
	return fmt.Appendf(nil, `{"k":%d,"n":%d,"share":%v,"lo":%v,"hi":%v}`, p.K, p.N, *stats.Round4(share), *stats.Round4(iv.Lo), *stats.Round4(iv.Hi)), nil
}

// Mean is a sample mean with its Student t 95% interval, cut to the range
// the values can take (a t interval of a few counts or shares otherwise
// reaches below zero); Value is nil for an empty sample, Lo and Hi below two
// values.
type Mean struct {
	N     int      `json:"n"`
	Value *float64 `json:"mean"`
	Lo    *float64 `json:"lo"`
	Hi    *float64 `json:"hi"`
}

// newMean summarises a sample whose values lie between floor and ceil.
func newMean(r stats.Running, floor, ceil float64) Mean {
	m := Mean{N: r.N()}
	if v, ok := r.Mean(); ok {
		m.Value = stats.Round4(v)
	}
	if iv, ok := r.MeanInterval(stats.Level); ok {
		m.Lo, m.Hi = stats.Round4(max(floor, iv.Lo)), stats.Round4(min(ceil, iv.Hi))
	}
	return m
}

// Significance is one test's p-value and its Benjamini-Hochberg q-value
// over all the tests of the report (Report.Tests), both to 4 significant
// digits.
type Significance struct {
	P float64 `json:"p"`
	Q float64 `json:"q"`
}

// SystemFailures are the harness and infrastructure failures (SYS codes,
// and any other code that is not a MAST mode) of a group: counted here and
// nowhere else, so that an endpoint that never answered does not read as
// an agent failing.
type SystemFailures struct {
	Traces int          `json:"traces"` // traces with any such code
	Failed int          `json:"failed"` // of which failed
	Codes  []SystemCode `json:"codes"`
}

// CustomCode is one code of the user's own rules in a group: the traces
// it was found on, and in how many of the failed and successful ones.
type CustomCode struct {
	Code      string     `json:"code"`
	Name      string     `json:"name,omitempty"`
	Traces    Proportion `json:"traces"`
	Failed    Proportion `json:"failed"`
	Succeeded Proportion `json:"succeeded"`
}

// SystemCode is one harness or infrastructure failure in a group.
type SystemCode struct {
	Code   string     `json:"code"`
	Name   string     `json:"name"`
	Traces Proportion `json:"traces"`
	Failed int        `json:"failed"`
}

// outcome classes of a trace.
const (
	unknown = iota
	succeeded
	failed
)

// member is one trace reduced to what the report's loops over a million
// traces read: small, so that the members fit in a few pages; the rest of
// the trace is read from the loaded cohort and its marks by index.
type member struct {
	trace   int32 // the index of the trace in the loaded cohort
	group   int32
	modes   uint16 // bit i: taxonomy.MAST.Modes[i] is present
	outcome int8
}

// found is what the selected sources found on a trace.
type found struct {
	modes  uint16     // bit i: taxonomy.MAST.Modes[i] is present
	first  [16]uint32 // by MAST index: 1 + the earliest located step, 0 unlocated
	system []int32    // indices into the other codes (SYS and unknown)
}

// modeMarks folds the store's marks, as they stream, into each trace's
// found modes, indexed as the store's traces.
//
// The loaders mark a trace's findings together, trace after trace: the
// trace being marked is kept whole, and kept compactly once another is
// marked (its modes, and the first step of each present mode only). Kept
// whole, a million traces took 100 MB of fresh memory, a sixth of what the
// report allocated. A trace marked again after another is opened from what
// was kept and kept again, anew.
type modeMarks struct {
	// kept holds blocks of markBlock traces, by trace index, up to the
	// last trace kept, and firsts blocks of markBlock first steps: the
	// found.first of kept traces, for their present modes in order. Slices
	// grown by doubling would copy a million traces' worth again and
	// again, into memory fresh from the system each time.
	kept   [][]keptMarks
	firsts [][]uint32
	nFirst uint32 // the firsts kept
	system map[int32][]int32
	open   found
	opened int32 // the trace open is, -1 for none
	// code maps a stored mode to its MAST index, or to -1-i for the i-th
	// of systemCodes, looked up once per distinct string.
	code        map[string]int
	systemCodes []string
}

// keptMarks is a trace's found modes, kept compactly.
type keptMarks struct {
	modes   uint16
	firstAt uint32 // where its first steps start in modeMarks.firsts
}

func newModeMarks() *modeMarks {
	return &modeMarks{code: map[string]int{}, system: map[int32][]int32{}, opened: -1}
}

func (mm *modeMarks) add(mk store.Mark) {
	if mk.Trace != mm.opened {
		mm.keep()
		mm.open, mm.opened = mm.of(mk.Trace), mk.Trace
	}
	k, ok := mm.code[mk.Mode]
	if !ok {
		k = mastIndex(mk.Mode)
		if k < 0 {
			k = -1 - len(mm.systemCodes)
			mm.systemCodes = append(mm.systemCodes, mk.Mode)
		}
		mm.code[mk.Mode] = k
	}
	f := &mm.open
	if k < 0 {
		if si := int32(-1 - k); !slices.Contains(f.system, si) {
			f.system = append(f.system, si)
		}
		return
	}
	f.modes |= 1 << k
	if at := uint32(mk.Step) + 1; mk.Step >= 0 && (f.first[k] == 0 || at < f.first[k]) {
		f.first[k] = at
	}
}

// keep stores the open trace away; the marks are read after it.
func (mm *modeMarks) keep() {
	i, f := mm.opened, mm.open
	if i < 0 {
		return
	}
	mm.opened = -1
	if len(f.system) > 0 {
		mm.system[i] = f.system
	}
	for int(i)/markBlock >= len(mm.kept) {
		mm.kept = append(mm.kept, make([]keptMarks, markBlock))
	}
	mm.kept[i/markBlock][i%markBlock] = keptMarks{modes: f.modes, firstAt: mm.nFirst}
	for b := f.modes; b != 0; b &= b - 1 {
		if int(mm.nFirst/markBlock) == len(mm.firsts) {
			mm.firsts = append(mm.firsts, make([]uint32, markBlock))
		}
		mm.firsts[mm.nFirst/markBlock][mm.nFirst%markBlock] = f.first[bits.TrailingZeros16(b)]
		mm.nFirst++
	}
}

const markBlock = 1 << 13

// keptOf is the kept record of trace i, zero when none.
func (mm *modeMarks) keptOf(i int32) keptMarks {
	if int(i)/markBlock < len(mm.kept) {
		return mm.kept[i/markBlock][i%markBlock]
	}
	return keptMarks{}
}

// of is what was found on the store's i-th trace.
func (mm *modeMarks) of(i int32) found {
	if i == mm.opened {
		return mm.open
	}
	k := mm.keptOf(i)
	f := found{modes: k.modes, system: mm.system[i]}
	at := k.firstAt
	for b := f.modes; b != 0; b &= b - 1 {
		f.first[bits.TrailingZeros16(b)] = mm.firsts[at/markBlock][at%markBlock]
		at++
	}
	return f
}

// systemOf is of(i).system, without the rest.
func (mm *modeMarks) systemOf(i int32) []int32 {
	if i == mm.opened {
		return mm.open.system
	}
	return mm.system[i]
}

// modes is of(i).modes, without the rest.
func (mm *modeMarks) modes(i int32) uint16 {
	if i == mm.opened {
		return mm.open.modes
	}
	return mm.keptOf(i).modes
}

// mastIndex is the position of a MAST code in the taxonomy, or -1.
func mastIndex(code string) int {
	code = taxonomy.CanonicalCode(code)
	for i, m := range taxonomy.MAST.Modes {
		if m.Code == code {
			return i
		}
	}
	return -1
}

func init() {
	// A member's modes are a uint16 bitset.
	if len(taxonomy.MAST.Modes) > 16 {
		panic("analyze: more than 16 MAST modes do not fit a member's bitset")
	}
}

// cohort is the loaded data of a report.
type cohort struct {
	data        *store.Cohort
	marks       *modeMarks
	members     []member
	groups      []string // names, sorted
	systemCodes []string
	// custom[s] says systemCodes[s] is none of faultline's codes but one
	// of the user's rules.
	custom    []bool
	codeNames map[string]string
	// annotated[g][s] counts the traces of group g annotated by sources[s];
	// the last row is the whole cohort.
	annotated [][]int
	sources   []string
	// written lists, by group, the names as written that its canonical
	// model name merged.
	written map[string][]string
}

// CohortLoader is what a cohort report reads from a store: the selection in
// bulk, never a trace at a time.
type CohortLoader interface {
	// LoadCohort returns the traces with the given ids (all when nil), the
	// annotation sources on them, and which source annotated which trace,
	// and calls mark with every finding of the selected sources that marks
	// a mode present.
	LoadCohort(ctx context.Context, ids []string, sources []string, mark func(store.Mark)) (*store.Cohort, error)
}

// BuildReport computes the cohort report of the stored traces.
func BuildReport(ctx context.Context, st CohortLoader, opt ReportOptions) (*Report, error) {
	if opt.By == "" {
		opt.By = "model"
	}
	key, err := groupKey(opt.By, opt.Aliases)
	if err != nil {
		return nil, err
	}
	if opt.Rule == (Rule{}) {
		opt.Rule = DefaultRule
	}
	if opt.Compare != nil && len(opt.Compare) != 2 {
		return nil, fmt.Errorf("%w: it takes two groups, got %d", ErrCompare, len(opt.Compare))
	}
	marks := newModeMarks()
	data, err := st.LoadCohort(ctx, opt.IDs, opt.Sources, marks.add)
	if err != nil {
		return nil, err
	}
	c, err := newCohort(data, marks, key, opt)
	if err != nil {
		return nil, err
	}
	r := &Report{
		Schema:          ReportSchema,
		By:              opt.By,
		SourceSelection: append([]string{}, opt.Sources...),
		Sources:         c.sources,
		Traces:          len(c.members),
		Rule:            opt.Rule,
		Groups:          []*Group{},
	}
	var tests family
	// members[g] lists the members of group g; the last entry is everyone.
	members := make([][]int32, len(c.groups)+1)
	for i, m := range c.members {
		members[m.group] = append(members[m.group], int32(i))
		members[len(c.groups)] = append(members[len(c.groups)], int32(i))
	}
	// The groups are counted apart, on every core: each test goes into its
	// group's family, and the families are joined in the groups' order.
	names := append(slices.Clone(c.groups), "all")
	groups, families := make([]*Group, len(names)), make([]family, len(names))
	onEveryCore(members, func(g int) {
		groups[g] = c.group(names[g], members[g], c.annotated[g], opt.Rule, &families[g])
	})
	for g, group := range groups {
		tests = append(tests, families[g]...)
		if g < len(c.groups) {
			group.AlsoWrittenAs = c.written[group.Name]
			r.Groups = append(r.Groups, group)
		} else {
			r.All = group
		}
	}
	if opt.Compare != nil {
		r.Compare = compare(r.Groups[0], r.Groups[1], &tests)
	}
	r.Tests = tests.adjust()
	onEveryCore(members, func(g int) {
		opt.Rule.classify(groups[g])
		groups[g].Interventions = c.recommend(groups[g], members[g])
	})
	if r.Compare != nil {
		r.Compare.classify(opt.Rule.Alpha)
	}
	tests.round()
	return r, nil
}

// onEveryCore calls work(g) for each group g of members, on as many
// goroutines as there are cores, the largest groups first: the last group,
// everyone, is as large as the others together.
func onEveryCore(members [][]int32, work func(g int)) {
	order := make([]int, len(members))
	for g := range order {
		order[g] = g
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(members[b]) - len(members[a]) })
	next := make(chan int, len(order))
	for _, g := range order {
		next <- g
	}
	close(next)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(order)) {
		wg.Go(func() {
			for g := range next {
				work(g)
			}
		})
	}
	wg.Wait()
}

// newCohort reduces the loaded rows to members and groups.
func newCohort(data *store.Cohort, marks *modeMarks, key func(*store.Cohort, *store.CohortTrace) string, opt ReportOptions) (*cohort, error) {
	c := &cohort{data: data, marks: marks, members: make([]member, 0, len(data.Traces)), written: map[string][]string{}}
	names := map[string]bool{}
	for i := range data.Traces {
		t := &data.Traces[i]
		name := groupName(key(data, t))
		names[name] = true
		if model := data.Text(t.Model); opt.By == "model" && model != "" && model != name && !slices.Contains(c.written[name], model) {
			c.written[name] = append(c.written[name], model)
		}
	}
	for _, w := range c.written {
		slices.Sort(w)
	}
	for name := range names {
		c.groups = append(c.groups, name)
	}
	sort.Strings(c.groups)
	if opt.Compare != nil {
		if opt.By == "model" {
			opt.Compare = []string{groupName(opt.Aliases.Canonical(opt.Compare[0])), groupName(opt.Aliases.Canonical(opt.Compare[1]))}
		}
		for _, want := range opt.Compare {
			if !names[want] {
				return nil, fmt.Errorf("%w: no %s named %q among these traces; there are: %s", ErrCompare, opt.By, want, strings.Join(c.groups, ", "))
			}
		}
		if opt.Compare[0] == opt.Compare[1] {
			return nil, fmt.Errorf("%w: it needs two different groups, got %q twice", ErrCompare, opt.Compare[0])
		}
		c.groups = slices.Clone(opt.Compare)
	}
	groupIndex := map[string]int32{}
	for i, name := range c.groups {
		groupIndex[name] = int32(i)
	}
	// Traces outside the compared groups are dropped; positions map the
	// store's trace indices to members.
	position := make([]int32, len(data.Traces))
	for i := range data.Traces {
		t := &data.Traces[i]
		g, ok := groupIndex[groupName(key(data, t))]
		position[i] = -1
		if !ok {
			continue
		}
		m := member{trace: int32(i), group: g, modes: marks.modes(int32(i))}
		if o := data.Outcome(t); o != nil && o.Success != nil {
			m.outcome = failed
			if *o.Success {
				m.outcome = succeeded
			}
		}
		position[i] = int32(len(c.members))
		c.members = append(c.members, m)
	}

	c.systemCodes, c.codeNames = marks.systemCodes, opt.CodeNames
	for _, code := range c.systemCodes {
		_, known := taxonomy.System.Mode(code)
		c.custom = append(c.custom, !known)
	}

	// The sources that count: those selected that annotated a trace, with
	// the detectors wherever they ran (their silence is a verdict).
	detectorRan := false
	for i, t := range data.Traces {
		detectorRan = detectorRan || (position[i] >= 0 && t.Detected)
	}
	var selected []string
	for _, src := range data.Sources {
		if store.MatchSource(src, opt.Sources) {
			selected = append(selected, src)
		}
	}
	if detectorRan && store.MatchSource(detect.Source, opt.Sources) && !slices.Contains(selected, detect.Source) {
		selected = append(selected, detect.Source)
		sort.Strings(selected)
	}
	c.sources = append([]string{}, selected...)
	sourceIndex := map[string]int{}
	for i, src := range selected {
		sourceIndex[src] = i
	}
	c.annotated = make([][]int, len(c.groups)+1)
	for g := range c.annotated {
		c.annotated[g] = make([]int, len(selected))
	}
	count := func(p int32, src string) {
		if s, ok := sourceIndex[src]; ok {
			c.annotated[c.members[p].group][s]++
			c.annotated[len(c.groups)][s]++
		}
	}
	for _, a := range data.Annotations {
		src := data.Sources[a.Source]
		// A trace the detectors ran on is counted once below, findings or not.
		if p := position[a.Trace]; p >= 0 && !(src == detect.Source && data.Traces[a.Trace].Detected) {
			count(p, src)
		}
	}
	for i, t := range data.Traces {
		if p := position[i]; p >= 0 && t.Detected {
			count(p, detect.Source)
		}
	}
	return c, nil
}

// UnknownGroup names the group of the traces whose grouping field is empty.
// A trace whose field is literally this name falls in the same group.
const UnknownGroup = "(unknown)"

func groupName(name string) string {
	if name == "" {
		return UnknownGroup
	}
	return name
}

func groupKey(by string, aliases store.ModelAliases) (func(*store.Cohort, *store.CohortTrace) string, error) {
	switch by {
	case "model":
		// Named once per distinct model, not once per trace.
		canonical := map[store.Name]string{}
		return func(c *store.Cohort, t *store.CohortTrace) string {
			name, ok := canonical[t.Model]
			if !ok {
				name = aliases.Canonical(c.Text(t.Model))
				canonical[t.Model] = name
			}
			return name
		}, nil
	case "system":
		return func(c *store.Cohort, t *store.CohortTrace) string { return c.Text(t.System) }, nil
	case "scenario":
		return func(c *store.Cohort, t *store.CohortTrace) string { return c.Text(t.Scenario) }, nil
	}
	return nil, fmt.Errorf("cannot group by %q: use one of %s", by, strings.Join(Groupings, ", "))
}

// group computes every figure of one group of members.
func (c *cohort) group(name string, idx []int32, annotated []int, rule Rule, tests *family) *Group {
	g := &Group{Name: name, Traces: len(idx), Modes: []*ModeStats{}, Pairs: []Pair{}, Annotated: []SourceShare{}}
	var scores stats.Running
	var metric *OutcomeMetric
	metrics := map[string]bool{}
	var present, inFailed, inSucceeded [16]int
	var density [3]stats.Running // failed, succeeded, failed but not by the harness alone
	distribution := []int{}
	systemCodes := map[int32]*SystemCode{}
	customCodes := map[int32]*CustomCode{}
	for _, i := range idx {
		m := &c.members[i]
		t := &c.data.Traces[m.trace]
		switch m.outcome {
		case succeeded:
			g.Succeeded++
		case failed:
			g.Failed++
		default:
			g.Unknown++
			if t.Undecided != 0 {
				if g.UnknownWhy == nil {
					g.UnknownWhy = map[string]int{}
				}
				g.UnknownWhy[c.data.Text(t.Undecided)]++
			}
		}
		if o := c.data.Outcome(t); m.outcome != unknown && o.Score != nil {
			score := *o.Score
			scores.Add(score)
			metrics[o.Metric] = true
			if metric == nil {
				metric = &OutcomeMetric{Min: score, Max: score}
			}
			metric.Min, metric.Max = min(metric.Min, score), max(metric.Max, score)
		}
		system := c.count(c.marks.systemOf(m.trace), customCodes, m.outcome)
		if m.modes != 0 {
			g.WithModes++
		}
		for b := m.modes; b != 0; b &= b - 1 {
			k := bits.TrailingZeros16(b)
			present[k]++
			switch m.outcome {
			case failed:
				inFailed[k]++
			case succeeded:
				inSucceeded[k]++
			}
		}
		n := bits.OnesCount16(m.modes)
		switch m.outcome {
		case failed:
			density[0].Add(float64(n))
			for len(distribution) <= n {
				distribution = append(distribution, 0)
			}
			distribution[n]++
			if n == 0 && len(system) > 0 {
				g.Density.HarnessOnly++
			} else {
				density[2].Add(float64(n))
			}
		case succeeded:
			density[1].Add(float64(n))
		}
		if len(system) > 0 {
			g.System.Traces++
			if m.outcome == failed {
				g.System.Failed++
			}
		}
		for _, s := range system {
			sc := systemCodes[s]
			if sc == nil {
				code := c.systemCodes[s]
				sc = &SystemCode{Code: code, Name: taxonomy.Name(code)}
				systemCodes[s] = sc
			}
			sc.Traces.K++
			if m.outcome == failed {
				sc.Failed++
			}
		}
	}
	g.SuccessRate = Proportion{K: g.Succeeded, N: g.Succeeded + g.Failed}
	if metric != nil {
		metric.Name = strings.Join(sortedKeys(metrics), ", ")
		// Scores between 0 and 1 are shares (recall, F1); others unbounded.
		floor, ceil := math.Inf(-1), math.Inf(1)
		if metric.Min >= 0 && metric.Max <= 1 {
			floor, ceil = 0, 1
		}
		metric.Mean = newMean(scores, floor, ceil)
		g.Metric = metric
	}
	for s, src := range c.sources {
		g.Annotated = append(g.Annotated, SourceShare{Source: src, Proportion: Proportion{K: annotated[s], N: g.Traces}})
	}
	for k, mode := range taxonomy.MAST.Modes {
		if present[k] == 0 {
			continue
		}
		g.Modes = append(g.Modes, &ModeStats{
			Mode: mode.Code, Name: mode.Name, bit: k,
			All:       Proportion{K: present[k], N: g.Traces},
			Failed:    Proportion{K: inFailed[k], N: g.Failed},
			Succeeded: Proportion{K: inSucceeded[k], N: g.Succeeded},
		})
	}
	rule.test(g, tests)
	most := float64(len(taxonomy.MAST.Modes))
	g.Density.Failed, g.Density.Succeeded, g.Density.Distribution = newMean(density[0], 0, most), newMean(density[1], 0, most), distribution
	g.Density.AgentFailed = newMean(density[2], 0, most)
	g.failedDensity = density[0]
	g.Pairs = c.pairs(idx)
	g.Cascades = c.cascades(idx, tests)
	g.System.Codes = []SystemCode{}
	for _, sc := range systemCodes {
		sc.Traces.N = g.Traces
		g.System.Codes = append(g.System.Codes, *sc)
	}
	sort.Slice(g.System.Codes, func(i, j int) bool { return systemOrder(g.System.Codes[i].Code) < systemOrder(g.System.Codes[j].Code) })
	g.Custom = []CustomCode{}
	for _, cc := range customCodes {
		cc.Traces.N, cc.Failed.N, cc.Succeeded.N = g.Traces, g.Failed, g.Succeeded
		g.Custom = append(g.Custom, *cc)
	}
	sort.Slice(g.Custom, func(i, j int) bool {
		a, b := g.Custom[i], g.Custom[j]
		return a.Traces.K > b.Traces.K || a.Traces.K == b.Traces.K && a.Code < b.Code
	})
	return g
}

// count adds a trace's user codes to byCode and returns its system codes
// alone: codes itself, not copied, when none is a user's (most traces).
func (c *cohort) count(codes []int32, byCode map[int32]*CustomCode, o int8) []int32 {
	if !slices.ContainsFunc(codes, func(s int32) bool { return c.custom[s] }) {
		return codes
	}
	var system []int32
	for _, s := range codes {
		if !c.custom[s] {
			system = append(system, s)
			continue
		}
		cc := byCode[s]
		if cc == nil {
			code := c.systemCodes[s]
			cc = &CustomCode{Code: code, Name: c.codeNames[code]}
			byCode[s] = cc
		}
		cc.Traces.K++
		switch o {
		case failed:
			cc.Failed.K++
		case succeeded:
			cc.Succeeded.K++
		}
	}
	return system
}

// systemOrder sorts SYS codes in their taxonomy's order, codes of no
// taxonomy last by name.
func systemOrder(code string) string {
	for i, m := range taxonomy.System.Modes {
		if m.Code == code {
			return fmt.Sprintf("0%03d", i)
		}
	}
	return "1" + code
}

// Density is how many distinct MAST modes a trace shows.
type Density struct {
	Failed    Mean `json:"failed"`    // per failed trace: the study's failure density
	Succeeded Mean `json:"succeeded"` // per successful trace, for contrast
	// Distribution[k] counts the failed traces with k distinct MAST modes.
	Distribution []int `json:"distribution"`
	// HarnessOnly counts the failed traces with a harness or infrastructure
	// failure and no MAST mode: runs the endpoint or harness cut short,
	// which count above as failures with no mode. AgentFailed is the
	// density without them.
	HarnessOnly int  `json:"harness_only"`
	AgentFailed Mean `json:"agent_failed"`
}

// family collects the report's tests so that their q-values are adjusted
// together, once every test is known.
type family []*Significance

func (f *family) add(p float64) *Significance {
	s := &Significance{P: p}
	*f = append(*f, s)
	return s
}

// adjust sets every q-value and returns the number of tests.
func (f family) adjust() int {
	p := make([]float64, len(f))
	for i, s := range f {
		p[i] = s.P
	}
	for i, q := range stats.BenjaminiHochberg(p) {
		f[i].Q = q
	}
	return len(f)
}

// round cuts p- and q-values to 4 significant digits for output, once the
// exact values have been used.
func (f family) round() {
	for _, s := range f {
		s.P, s.Q = significant4(s.P), significant4(s.Q)
	}
}

// significant4 rounds to 4 significant digits, through the decimal form
// so that p-values far below 1e-300 survive.
func significant4(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 4, 64), 64)
	return v
}

func ptr[T any](v T) *T { return &v }

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
