package eval

import (
	"slices"
	"strings"

	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/trace"
)

// Labels are one side of a comparison: the label a source gives each trace
// and mode (the last one, where a set repeats a pair), found by row and
// column. They hold no label values but a table of small records without
// pointers, and every label's steps in one slice: a judge's verdicts on a
// hundred thousand traces are 1.4 million labels, which as labels.ModeLabel
// values the garbage collector scanned for longer than the comparison
// took.
type Labels struct {
	side Side             // the source, and what it labels (Traces is set by finish)
	ids  []string         // the traces, in the order of their first label
	rows map[string]int32 // trace → index in ids
	cols map[string]int32 // mode, as the labels spell it → column
	// modes are the columns' modes; verdicts the distinct verdicts, which
	// marks number.
	modes    []string
	verdicts []trace.Verdict
	marks    []mark
	steps    []int // the marks' steps, one after the other
	// cells holds, row by row, 1 + the index in marks of each column's
	// label, 0 where there is none; made by finish.
	cells []int32
	last  int32 // the row of the last label added, -1 before any
}

// mark is one label, in the row and column of its trace and mode.
type mark struct {
	row, col int32
	from, to int32 // its steps, steps[from:to]
	verdict  uint8 // index in verdicts
	implied  bool
}

// newLabels starts the labels of a source, about n of them.
func newLabels(name string, n int) *Labels {
	return &Labels{side: Side{Name: name}, rows: map[string]int32{}, cols: map[string]int32{}, marks: make([]mark, 0, n), last: -1}
}

// Index indexes a label set for comparisons.
func Index(s *labels.Set) *Labels {
	x := newLabels(s.Name, len(s.Labels))
	x.side.Detail, x.side.Sources = s.Detail, s.Sources
	for _, l := range s.Labels {
		x.add(l)
	}
	x.finish()
	return x
}

// add appends a label, which comes after the others of its trace when the
// labels come trace by trace, as a set's mostly do.
func (x *Labels) add(l labels.ModeLabel) {
	if x.last < 0 || x.ids[x.last] != l.Trace {
		row, ok := x.rows[l.Trace]
		if !ok {
			row = int32(len(x.ids))
			x.rows[l.Trace] = row
			x.ids = append(x.ids, l.Trace)
		}
		x.last = row
	}
	col, ok := x.cols[l.Mode]
	if !ok {
		col = int32(len(x.modes))
		x.cols[l.Mode] = col
		x.modes = append(x.modes, l.Mode)
	}
	v := slices.Index(x.verdicts, l.Verdict)
	if v < 0 {
		v = len(x.verdicts)
		x.verdicts = append(x.verdicts, l.Verdict)
	}
	from := int32(len(x.steps))
	x.steps = append(x.steps, l.Steps...)
	x.marks = append(x.marks, mark{row: x.last, col: col, from: from, to: int32(len(x.steps)), verdict: uint8(v), implied: l.Implied})
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

// finish makes the table of rows and columns once every label is added.
func (x *Labels) finish() {
	x.side.Traces = len(x.ids)
	x.cells = make([]int32, len(x.ids)*len(x.modes))
	for i, m := range x.marks {
		x.cells[int(m.row)*len(x.modes)+int(m.col)] = int32(i) + 1
	}
}

// Describe says what the labels hold.
func (x *Labels) Describe() Side {
	d := x.side
	d.Sources = append([]string{}, d.Sources...) // [] rather than null in JSON
	return d
}

// label is the label of a mark. Its steps are a part of the labels' and
// must not be changed.
func (x *Labels) label(m mark) labels.ModeLabel {
	l := labels.ModeLabel{Trace: x.ids[m.row], Mode: x.modes[m.col], Verdict: x.verdicts[m.verdict], Implied: m.implied}
	if m.to > m.from {
		l.Steps = x.steps[m.from:m.to:m.to]
	}
	return l
}

// Set lists the labels as a label set, trace by trace.
func (x *Labels) Set() *labels.Set {
	s := &labels.Set{Name: x.side.Name, Detail: x.side.Detail, Sources: slices.Clone(x.side.Sources), Labels: make([]labels.ModeLabel, 0, len(x.marks))}
	for _, m := range x.marks {
		s.Labels = append(s.Labels, x.label(m))
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
	if i := x.cells[int(row)*len(x.modes)+int(col)]; i > 0 {
		return x.label(x.marks[i-1])
	}
	return labels.ModeLabel{}
}

// get is the label of a trace and mode, the zero label when there is none.
func (x *Labels) get(id, mode string) labels.ModeLabel {
	row, ok := x.rows[id]
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
	slices.SortFunc(rows, func(a, b int32) int { return strings.Compare(x.ids[a], x.ids[b]) })
	return rows
}
