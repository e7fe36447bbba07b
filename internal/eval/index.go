package eval

import (
	"slices"
	"strings"

	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/trace"
)

// Labels are one side of a comparison: the label a source gives each trace
// and mode (the last one, where a set repeats a pair), in a table by row
// and column. The table holds no pointers and every label's steps are in
// one slice: a judge's verdicts on a hundred thousand traces are 1.4
// million labels, which as labels.ModeLabel values the garbage collector
// scanned for longer than the comparison took; and the table is small,
// since on this machine's kind of host a megabyte of memory touched for the
// first time costs over ten milliseconds.
type Labels struct {
	side Side     // the source, and what it labels (Traces is set by finish)
	ids  []string // the traces, in the order of their first label
	// rows maps a trace to its index in ids once a trace came out of id
	// order; until then (and a stored source's come in order) a binary
	// search of ids finds it, which saves a hundred thousand insertions.
	rows map[string]int32
	cols map[string]int32 // mode, as the labels spell it → column
	// modes are the columns' modes; verdicts the distinct verdicts, which
	// kinds number.
	modes    []string
	verdicts []trace.Verdict
	// The table, row by row, a cell a column, in two slices of small
	// numbers. kinds holds 1 + the index in verdicts of a cell's verdict,
	// with the bit implied set for an implied label; 0 for no label.
	// stepsAt holds 1 + where its steps start in steps, 0 for none: there
	// the count of its steps, then the steps.
	kinds   []uint16
	stepsAt []int32
	steps   []int
	last    int32 // the row of the last label added, -1 before any
	// capRows is how many rows to make room for at first.
	capRows int
}

// implied marks an implied label's kind.
const implied = 1 << 15

// newLabels starts the labels of a source, on about traces traces.
func newLabels(name string, traces int) *Labels {
	return &Labels{side: Side{Name: name}, cols: map[string]int32{}, last: -1, capRows: traces}
}

// Index indexes a label set for comparisons.
func Index(s *labels.Set) *Labels {
	x := newLabels(s.Name, 0)
	x.side.Detail, x.side.Sources = s.Detail, s.Sources
	for _, l := range s.Labels {
		x.add(l)
	}
	x.finish()
	return x
}

// add sets a label.
func (x *Labels) add(l labels.ModeLabel) {
	col := x.addColumn(l.Mode)
	x.addAt(x.row(l.Trace), col, l)
}

// row is the row of a trace, a new one when the trace has none yet.
func (x *Labels) row(id string) int32 {
	if x.last >= 0 && x.ids[x.last] == id {
		return x.last
	}
	n := len(x.ids)
	row, ok := x.rowOf(id)
	if !ok {
		row = int32(n)
		if x.rows == nil && n > 0 && x.ids[n-1] > id {
			x.rows = make(map[string]int32, n+1)
			for i, id := range x.ids {
				x.rows[id] = int32(i)
			}
		}
		if x.rows != nil {
			x.rows[id] = row
		}
		if x.ids == nil {
			x.ids = make([]string, 0, x.capRows)
		}
		x.ids = append(x.ids, id)
		x.kinds = addRow(x.kinds, len(x.modes), x.capRows)
		x.stepsAt = addRow(x.stepsAt, len(x.modes), x.capRows)
	}
	x.last = row
	return row
}

// rowOf is the row of a trace, if it has one.
func (x *Labels) rowOf(id string) (int32, bool) {
	if x.rows != nil {
		row, ok := x.rows[id]
		return row, ok
	}
	if n := len(x.ids); n == 0 || x.ids[n-1] < id {
		return 0, false // past the last, as a stored source's next trace is
	}
	i, ok := slices.BinarySearch(x.ids, id)
	return int32(i), ok
}

// addColumn is the column of a mode, a new one when no label names it yet.
// A new column widens the rows made so far, which is cheap: a source's
// modes mostly all show on its first trace.
func (x *Labels) addColumn(mode string) int32 {
	if col, ok := x.cols[mode]; ok {
		return col
	}
	w := len(x.modes)
	x.cols[mode] = int32(w)
	x.modes = append(x.modes, mode)
	x.kinds = widen(x.kinds, len(x.ids), w, x.capRows)
	x.stepsAt = widen(x.stepsAt, len(x.ids), w, x.capRows)
	return int32(w)
}

// addRow adds a row of w zero cells to a table, making room for capRows
// rows at first.
func addRow[T uint16 | int32](table []T, w, capRows int) []T {
	if cap(table) == 0 {
		table = make([]T, 0, max(capRows, 1)*w)
	}
	// Cells past the length are zero: the table only grows.
	return slices.Grow(table, w)[:len(table)+w]
}

// widen adds a column to a table of rows rows of w cells.
func widen[T uint16 | int32](table []T, rows, w, capRows int) []T {
	if rows == 0 {
		return table
	}
	wider := make([]T, rows*(w+1), max(capRows, rows)*(w+1))
	for r := range rows {
		copy(wider[r*(w+1):], table[r*w:(r+1)*w])
	}
	return wider
}

// addAt sets label l in a row and column, those of its trace and mode.
func (x *Labels) addAt(row, col int32, l labels.ModeLabel) {
	v := slices.Index(x.verdicts, l.Verdict)
	if v < 0 {
		v = len(x.verdicts)
		x.verdicts = append(x.verdicts, l.Verdict)
	}
	i := int(row)*len(x.modes) + int(col)
	x.kinds[i] = uint16(v + 1)
	if l.Implied {
		x.kinds[i] |= implied
	}
	x.stepsAt[i] = 0
	if len(l.Steps) > 0 {
		x.growSteps(1 + len(l.Steps))
		x.stepsAt[i] = int32(len(x.steps)) + 1
		x.steps = append(x.steps, len(l.Steps))
		x.steps = append(x.steps, l.Steps...)
	}
	switch {
	case l.Verdict == trace.Unsure:
		x.side.Unsure++
	case l.Verdict == trace.Present || l.Verdict == trace.Absent:
		x.side.Decided++
	}
	if l.Implied {
		x.side.Implied++
	}
}

// growSteps makes room for n more steps. It grows the slice toward the
// size the rows so far predict for capRows rows rather than by doubling,
// whose copies touch fresh memory each time: at 100,000 traces, a tenth of
// the reading.
func (x *Labels) growSteps(n int) {
	need := len(x.steps) + n
	if need <= cap(x.steps) {
		return
	}
	if predicted := need * x.capRows / len(x.ids); predicted > 2*cap(x.steps) {
		x.steps = slices.Grow(x.steps, predicted-len(x.steps))
	}
}

// finish ends the adding of labels.
func (x *Labels) finish() {
	x.side.Traces = len(x.ids)
}

// Describe says what the labels hold.
func (x *Labels) Describe() Side {
	d := x.side
	d.Sources = append([]string{}, d.Sources...) // [] rather than null in JSON
	return d
}

// label is the label of a row and column, the zero label for none. Its
// steps are a part of the labels' and must not be changed.
func (x *Labels) label(row, col int) labels.ModeLabel {
	i := row*len(x.modes) + col
	kind := x.kinds[i]
	if kind == 0 {
		return labels.ModeLabel{}
	}
	l := labels.ModeLabel{Trace: x.ids[row], Mode: x.modes[col], Verdict: x.verdicts[kind&^implied-1], Implied: kind&implied != 0}
	if at := int(x.stepsAt[i]); at > 0 {
		n := x.steps[at-1]
		l.Steps = x.steps[at : at+n : at+n]
	}
	return l
}

// Set lists the labels as a label set, trace by trace.
func (x *Labels) Set() *labels.Set {
	s := &labels.Set{Name: x.side.Name, Detail: x.side.Detail, Sources: slices.Clone(x.side.Sources)}
	for i, kind := range x.kinds {
		if kind != 0 {
			s.Labels = append(s.Labels, x.label(i/len(x.modes), i%len(x.modes)))
		}
	}
	return s
}

// column is the column of a mode, -1 when no label names it.
func (x *Labels) column(mode string) int32 {
	if col, ok := x.cols[mode]; ok {
		return col
	}
	return -1
}

// at is the label of a row and column; the zero label (no verdict) for
// column -1 or none.
func (x *Labels) at(row, col int32) labels.ModeLabel {
	if col < 0 {
		return labels.ModeLabel{}
	}
	return x.label(int(row), int(col))
}

// get is the label of a trace and mode, the zero label when there is none.
func (x *Labels) get(id, mode string) labels.ModeLabel {
	row, ok := x.rowOf(id)
	if !ok {
		return labels.ModeLabel{}
	}
	return x.at(row, x.column(mode))
}

// sortedRows lists the rows in the order of their trace ids.
func (x *Labels) sortedRows() []int32 {
	rows := make([]int32, len(x.ids))
	for i := range rows {
		rows[i] = int32(i)
	}
	if x.rows == nil {
		return rows // ids in order
	}
	slices.SortFunc(rows, func(a, b int32) int { return strings.Compare(x.ids[a], x.ids[b]) })
	return rows
}
