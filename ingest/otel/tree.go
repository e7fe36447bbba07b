package otel

import (
	"bytes"
	"fmt"
	"sort"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// tree is a trace's spans as a tree, ready to be walked in order.
type tree struct {
	spans    []*Span
	children map[int][]int
	roots    []int
	visited  []bool
}

func newTree(spans []Span, notes *[]string) *tree {
	tr := &tree{children: map[int][]int{}}
	byID := make(map[pcommon.SpanID]int, len(spans))
	dups := 0
	for i := range spans {
		if _, ok := byID[spans[i].SpanID]; ok {
			dups++ // an exporter's retry sent it again
			continue
		}
		byID[spans[i].SpanID] = len(tr.spans)
		tr.spans = append(tr.spans, &spans[i])
	}
	if dups > 0 {
		*notes = append(*notes, fmt.Sprintf("%d spans received more than once; kept once", dups))
	}
	orphans := 0
	for i, s := range tr.spans {
		p, ok := byID[s.ParentID]
		switch {
		case s.ParentID.IsEmpty():
			tr.roots = append(tr.roots, i)
		case ok && p != i:
			tr.children[p] = append(tr.children[p], i)
		default:
			orphans++
			tr.roots = append(tr.roots, i)
		}
	}
	if orphans > 0 {
		*notes = append(*notes, fmt.Sprintf("%d spans whose parent span is missing; placed at the top", orphans))
	}
	tr.sort(tr.roots)
	for _, c := range tr.children {
		tr.sort(c)
	}
	tr.visited = make([]bool, len(tr.spans))
	return tr
}

// sort orders spans by start, then end, then span id, so that the same spans
// always give the same steps.
func (tr *tree) sort(idx []int) {
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := tr.spans[idx[a]], tr.spans[idx[b]]
		if !x.Start.Equal(y.Start) {
			return x.Start.Before(y.Start)
		}
		if !x.End.Equal(y.End) {
			return x.End.Before(y.End)
		}
		return bytes.Compare(x.SpanID[:], y.SpanID[:]) < 0
	})
}

// walk visits every span once: the roots in order, then whatever a parent
// cycle kept out of reach of any root.
func (tr *tree) walk(m *mapper) {
	for _, r := range tr.roots {
		tr.visit(m, r, "")
	}
	rest := []int{}
	for i, v := range tr.visited {
		if !v {
			rest = append(rest, i)
		}
	}
	if len(rest) > 0 {
		m.notes = append(m.notes, fmt.Sprintf("%d spans in a parent cycle; placed at the top", len(rest)))
		tr.sort(rest)
		for _, i := range rest {
			tr.visit(m, i, "")
		}
	}
}

func (tr *tree) visit(m *mapper, i int, agent string) {
	if tr.visited[i] {
		return
	}
	tr.visited[i] = true
	m.span(tr.spans[i], agent, func(agent string) {
		for _, c := range tr.children[i] {
			tr.visit(m, c, agent)
		}
	})
}
