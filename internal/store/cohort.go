package store

import (
	"encoding/json"
	"math"
	"slices"
	"strings"

	"github.com/faultline/faultline/trace"
)

// Cohort is what a cohort report reads from the store, loaded in bulk: a few
// queries over the whole selection rather than a Load per trace, and only
// the columns the report needs (never steps or task prompts), so that a
// report on 100,000 traces takes seconds and tens of megabytes.
type Cohort struct {
	Traces []CohortTrace // ordered by id
	// Sources lists every annotation source with a finding on the traces,
	// selected or not, sorted.
	Sources []string
	// Annotations pairs each trace with each source that has at least one
	// finding on it, of any verdict, once.
	Annotations []Annotation
	// names holds the strings the traces name by number (see Name), and
	// numbers their numbers.
	names   []string
	numbers map[string]Name
	// ids holds the traces' ids, one after the other, in blocks.
	ids [][]byte
	// outcomes holds the traces' primary outcomes in blocks, numbered from
	// 1 in the order kept, and shared the numbers of those of each value
	// (see KeepOutcome).
	outcomes [][]keptOutcome
	kept     int
	shared   map[outcomeValue]Outcome
}

// CohortTrace is one trace of a cohort. It holds no pointers (its id and
// primary outcome are kept by its cohort: see Cohort.ID and
// Cohort.Outcome), so that the garbage collector need not scan a cohort's
// list of traces, which it did again at every cycle: six pointers a trace
// made that a seventh of a report's work.
type CohortTrace struct {
	// Model, System and Scenario name the trace's fields in the cohort.
	Model, System, Scenario Name
	// Undecided says, for a trace without a decided outcome, why a scorer
	// left it so (the status it recorded, such as "not a diagnosis"); ""
	// when none said.
	Undecided Name
	// Detected is set when detectors ran on the trace, so that their
	// silence on it is a verdict.
	Detected bool
	// Outcome is the trace's primary outcome, kept by the cohort (see
	// Cohort.KeepOutcome and Cohort.Outcome); 0 when none is decided.
	Outcome Outcome
	// idBlock, idAt and idLen place the id in the cohort's id blocks.
	idBlock, idAt, idLen uint32
}

// Name is the number of a string in its cohort (see Cohort.NameOf and
// Cohort.Text); 0 is "".
type Name uint32

// NameOf returns the number of s in the cohort, giving a copy of it one
// when it has none yet.
func (c *Cohort) NameOf(s string) Name {
	if n, ok := c.numbers[s]; ok {
		return n
	}
	if c.numbers == nil {
		c.names, c.numbers = []string{""}, map[string]Name{"": 0}
		if s == "" {
			return 0
		}
	}
	s = strings.Clone(s) // not what it was cut from
	n := Name(len(c.names))
	c.names = append(c.names, s)
	c.numbers[s] = n
	return n
}

// Text returns the string a number names in the cohort.
func (c *Cohort) Text(n Name) string {
	if int(n) < len(c.names) {
		return c.names[n]
	}
	return ""
}

// ID returns a trace's id.
func (c *Cohort) ID(t *CohortTrace) string {
	return string(c.ids[t.idBlock][t.idAt : t.idAt+t.idLen])
}

// Outcome is the number of an outcome a cohort keeps; 0 is none.
type Outcome int32

// keptOutcome is an outcome a cohort keeps, with the score and success it
// points at.
type keptOutcome struct {
	trace.Outcome
	score   float64
	success bool
}

// outcomeValue is what an outcome is, for sharing one copy.
type outcomeValue struct {
	source, metric, detail string
	score                  uint64 // the bits, so that -0 and 0 stay apart
	scored, decided, ok    bool
}

// maxSharedOutcomes bounds the distinct outcomes shared: past it (scores of
// a continuous metric, say), each outcome is kept anew.
const maxSharedOutcomes = 4096

// outcomeBlock is the number of outcomes a block holds: kept in blocks,
// they are not copied as they grow, and one allocation serves thousands.
const outcomeBlock = 4096

// KeepOutcome keeps a copy of o (nil: none decided) and returns its
// number, for a trace's Outcome. Outcomes of one value share one copy, the
// cohort only reading them: a cohort's outcomes take a few values
// (succeeded or not, a recall of 0, 1/3, 1/2 or 1), and a copy for each
// trace was a quarter of a million traces' report in memory.
func (c *Cohort) KeepOutcome(o *trace.Outcome) Outcome {
	if o == nil {
		return 0
	}
	v := outcomeValue{source: o.Source, metric: o.Metric, detail: o.Detail, scored: o.Score != nil, decided: o.Success != nil}
	if o.Score != nil {
		v.score = math.Float64bits(*o.Score)
	}
	if o.Success != nil {
		v.ok = *o.Success
	}
	if n, ok := c.shared[v]; ok {
		return n
	}
	if c.kept%outcomeBlock == 0 {
		c.outcomes = append(c.outcomes, make([]keptOutcome, 0, outcomeBlock))
	}
	block := &c.outcomes[len(c.outcomes)-1]
	*block = append(*block, keptOutcome{Outcome: *o})
	k := &(*block)[len(*block)-1]
	if o.Score != nil {
		k.score = *o.Score
		k.Outcome.Score = &k.score
	}
	if o.Success != nil {
		k.success = *o.Success
		k.Outcome.Success = &k.success
	}
	c.kept++
	n := Outcome(c.kept)
	if c.shared == nil {
		c.shared = map[outcomeValue]Outcome{}
	}
	if len(c.shared) < maxSharedOutcomes {
		c.shared[v] = n
	}
	return n
}

// Outcome returns a trace's primary outcome, nil when none is decided; not
// to be changed.
func (c *Cohort) Outcome(t *CohortTrace) *trace.Outcome {
	if t.Outcome == 0 {
		return nil
	}
	n := int(t.Outcome) - 1
	return &c.outcomes[n/outcomeBlock][n%outcomeBlock].Outcome
}

// idBlock is the size of a block of ids, but for an id longer than that.
const idBlock = 64 << 10

// Annotation says that Sources[Source] annotated Traces[Trace].
type Annotation struct {
	Trace, Source int32
}

// Mark is a finding of a selected source that marks a mode (MAST or SYS)
// present on Traces[Trace]. Step is the first step it cites, or -1 when it
// cites none. A trace has as many marks of a mode as findings of it.
type Mark struct {
	Trace int32
	Step  int32
	Mode  string
}

// UndecidedStatus returns the status a scorer recorded on an undecided
// outcome ({"status": "not a diagnosis", ...} in its detail), "" when none.
func UndecidedStatus(outcomes []trace.Outcome) string {
	for _, o := range outcomes {
		var d struct {
			Status string `json:"status"`
		}
		if o.Success == nil && json.Unmarshal([]byte(o.Detail), &d) == nil && d.Status != "" {
			return d.Status
		}
	}
	return ""
}

// AddTrace appends a trace with its id and returns its index. A cohort
// grows to millions of traces: append grows a large slice by a quarter at
// a time, copying it again and again, so these double it.
func (c *Cohort) AddTrace(id string, t CohortTrace) int32 {
	if n := len(c.ids); n == 0 || len(c.ids[n-1])+len(id) > cap(c.ids[n-1]) {
		c.ids = append(c.ids, make([]byte, 0, max(idBlock, len(id))))
	}
	block := len(c.ids) - 1
	t.idBlock, t.idAt, t.idLen = uint32(block), uint32(len(c.ids[block])), uint32(len(id))
	c.ids[block] = append(c.ids[block], id...)
	c.Traces = appendDoubling(c.Traces, t)
	return int32(len(c.Traces) - 1)
}

// Annotate records that Sources[source] annotated Traces[trace].
func (c *Cohort) Annotate(trace, source int32) {
	c.Annotations = appendDoubling(c.Annotations, Annotation{Trace: trace, Source: source})
}

func appendDoubling[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		s = slices.Grow(s, max(len(s), 1024))
	}
	return append(s, v)
}

// SortSources puts Sources in order, for a loader that numbered them as
// it met them, and renumbers the annotations to match, each trace's in
// the new order.
func (c *Cohort) SortSources() {
	sorted := slices.Sorted(slices.Values(c.Sources))
	renumber := make([]int32, len(c.Sources))
	for i, src := range c.Sources {
		n, _ := slices.BinarySearch(sorted, src)
		renumber[i] = int32(n)
	}
	for i := range c.Annotations {
		c.Annotations[i].Source = renumber[c.Annotations[i].Source]
		// A trace's annotations are together and few: insertion sort.
		for j := i; j > 0 && c.Annotations[j-1].Trace == c.Annotations[j].Trace && c.Annotations[j-1].Source > c.Annotations[j].Source; j-- {
			c.Annotations[j-1], c.Annotations[j] = c.Annotations[j], c.Annotations[j-1]
		}
	}
	c.Sources = sorted
}
