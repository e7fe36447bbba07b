package eval

import (
	"slices"
	"strings"

	"github.com/faultline/faultline/internal/labels"
)

// labelIndex finds the label a set gives a trace and mode (the last one,
// where a set repeats a pair) by row and column: a table rather than a map
// per trace, which on a judge's hundred thousand traces cost more than the
// comparison itself.
type labelIndex struct {
	set  *labels.Set
	ids  []string         // the traces, in the order of their first label
	rows map[string]int32 // trace → index in ids
	cols map[string]int32 // mode, as the labels spell it → column
	// cells holds, row by row, 1 + the index in set.Labels of each
	// column's label, 0 where there is none.
	cells []int32
}

func newLabelIndex(s *labels.Set) *labelIndex {
	x := &labelIndex{set: s, rows: map[string]int32{}, cols: map[string]int32{}}
	at := make([][2]int32, len(s.Labels)) // row and column of each label
	last, lastRow := "", int32(-1)
	for i, l := range s.Labels {
		// A set's labels mostly come trace by trace.
		if l.Trace != last || lastRow < 0 {
			row, ok := x.rows[l.Trace]
			if !ok {
				row = int32(len(x.ids))
				x.rows[l.Trace] = row
				x.ids = append(x.ids, l.Trace)
			}
			last, lastRow = l.Trace, row
		}
		col, ok := x.cols[l.Mode]
		if !ok {
			col = int32(len(x.cols))
			x.cols[l.Mode] = col
		}
		at[i] = [2]int32{lastRow, col}
	}
	x.cells = make([]int32, len(x.ids)*len(x.cols))
	for i, rc := range at {
		x.cells[int(rc[0])*len(x.cols)+int(rc[1])] = int32(i) + 1
	}
	return x
}

// column is the column of a mode, -1 when no label names it.
func (x *labelIndex) column(mode string) int32 {
	if col, ok := x.cols[mode]; ok {
		return col
	}
	return -1
}

// at is the label of a row and column; the zero label (no verdict) for
// column -1 or none.
func (x *labelIndex) at(row, col int32) labels.ModeLabel {
	if col < 0 {
		return labels.ModeLabel{}
	}
	if i := x.cells[int(row)*len(x.cols)+int(col)]; i > 0 {
		return x.set.Labels[i-1]
	}
	return labels.ModeLabel{}
}

// get is the label of a trace and mode, the zero label when there is none.
func (x *labelIndex) get(id, mode string) labels.ModeLabel {
	row, ok := x.rows[id]
	if !ok {
		return labels.ModeLabel{}
	}
	return x.at(row, x.column(mode))
}

// sortedRows lists the rows in the order of their trace ids.
func (x *labelIndex) sortedRows() []int32 {
	rows := make([]int32, len(x.ids))
	for i := range rows {
		rows[i] = int32(i)
	}
	slices.SortFunc(rows, func(a, b int32) int { return strings.Compare(x.ids[a], x.ids[b]) })
	return rows
}
