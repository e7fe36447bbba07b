package receive

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest/otel"
	"github.com/faultline/faultline/trace"
)

// merge returns the stored trace with what spans (late spans of it) add:
// the steps of the spans it holds no step of, each in its place, and what
// they say of the run (its root span, at last; tokens), and whether that is
// anything (false: nothing to store, and stored is returned). The stored
// trace keeps every step, in its order.
//
// The new spans are mapped on their own (otel.Trace), then their steps are
// placed as the receiver orders a trace's steps, by time: each goes before
// the first stored step that came after it, and they keep their own order.
// A span the stored trace holds (an exporter's retry, a trace sent again)
// adds nothing, and neither does what a new span repeats of the stored
// steps, as the mapping of a whole trace leaves out what an earlier span
// gave: the conversation an LLM span carries as its input, a tool call or
// result by its call id. Steps of a span whose parent is stored (not among
// spans) take the agent of the stored step before them.
//
// The merged trace carries the stored findings of sources other than the
// detectors, their steps renumbered; the detectors' are dropped, to be run
// again on the merged steps (DetectedWith is cleared).
func merge(stored *trace.Trace, spans []otel.Span) (*trace.Trace, bool) {
	have := map[string]bool{}
	for i := range stored.Steps {
		have[stored.Steps[i].SpanID] = true
	}
	var fresh []otel.Span
	for _, s := range spans {
		if !have[s.SpanID.String()] {
			fresh = append(fresh, s)
		}
	}
	frag, _ := otel.Trace(fresh, stored.Format, stored.Source)
	if frag == nil {
		return stored, false
	}
	place := placeSteps(stored.Steps, frag.Steps)
	inheritAgents(stored.Steps, frag.Steps, place, fresh)
	keep := newSteps(stored.Steps, frag.Steps)
	added := 0
	for _, k := range keep {
		if k {
			added++
		}
	}
	rootCame := stored.Meta["otel.root_span_id"] == "" && frag.Meta["otel.root_span_id"] != ""
	if added == 0 && !rootCame {
		return stored, false
	}

	m := *stored
	m.Steps = make([]trace.Step, 0, len(stored.Steps)+added)
	moved := make([]int, len(stored.Steps)) // stored index → merged index
	j := 0
	for i := 0; i <= len(stored.Steps); i++ {
		for ; j < len(frag.Steps) && place[j] == i; j++ {
			if keep[j] {
				m.Steps = append(m.Steps, frag.Steps[j])
			}
		}
		if i < len(stored.Steps) {
			moved[i] = len(m.Steps)
			m.Steps = append(m.Steps, stored.Steps[i])
		}
	}
	for i := range m.Steps {
		m.Steps[i].Index = i
	}
	m.Link()
	refinal(m.Steps)
	m.Findings = nil
	for _, f := range stored.Findings {
		if f.Source == detect.Source {
			continue
		}
		f.Steps = slices.Clone(f.Steps)
		for i, s := range f.Steps {
			if s >= 0 && s < len(moved) {
				f.Steps[i] = moved[s]
			}
		}
		m.Findings = append(m.Findings, f)
	}
	m.DetectedWith = ""
	mergeRun(&m, frag)
	return &m, true
}

// placeSteps says where each of the new steps goes: before the stored step
// of that index (len(stored): at the end). A step goes before the first
// stored step that came after it; the new steps keep their order, and one
// without a time follows the one before it.
func placeSteps(stored, steps []trace.Step) []int {
	place := make([]int, len(steps))
	prev := -1
	for j := range steps {
		at := len(stored)
		if t := steps[j].Time; !t.IsZero() {
			at = slices.IndexFunc(stored, func(s trace.Step) bool { return s.Time.After(t) })
			if at < 0 {
				at = len(stored)
			}
		} else if prev >= 0 {
			at = prev
		}
		at = max(at, prev)
		place[j], prev = at, at
	}
	return place
}

// inheritAgents gives the steps of spans whose ancestry leaves the new
// spans (their agent span is stored) the agent of the stored step before
// them, or after them at the start.
func inheritAgents(stored, steps []trace.Step, place []int, spans []otel.Span) {
	byID := make(map[string]*otel.Span, len(spans))
	for i := range spans {
		byID[spans[i].SpanID.String()] = &spans[i]
	}
	hangs := func(id string) bool {
		s := byID[id]
		for seen := 0; s != nil && seen <= len(spans); seen++ {
			if s.ParentID.IsEmpty() {
				return false
			}
			parent := byID[s.ParentID.String()]
			if parent == nil {
				return true
			}
			s = parent
		}
		return s != nil
	}
	for j := range steps {
		if steps[j].Agent != "" || len(stored) == 0 || !hangs(steps[j].SpanID) {
			continue
		}
		steps[j].Agent = stored[max(place[j]-1, 0)].Agent
	}
}

// newSteps says which of the new steps the stored ones do not have: what
// an LLM span repeats of the conversation, a call or result by its call id.
// A message said more often than the stored steps say it is kept.
func newSteps(stored, steps []trace.Step) []bool {
	count := map[string]int{}
	for i := range stored {
		if k := stepKey(&stored[i]); k != "" {
			count[k]++
		}
	}
	keep := make([]bool, len(steps))
	for j := range steps {
		k := stepKey(&steps[j])
		if k == "" {
			keep[j] = true
			continue
		}
		count[k]--
		keep[j] = count[k] < 0
	}
	return keep
}

// stepKey identifies a step's content as the mapping of spans does when it
// leaves out what the trace has ("" for steps never left out).
func stepKey(s *trace.Step) string {
	switch s.Kind {
	case trace.KindMessage, trace.KindFinal:
		return "msg\x00" + s.Agent + "\x00" + s.Role + "\x00" + s.Text
	case trace.KindReasoning:
		return "reasoning\x00" + s.Agent + "\x00" + s.Text
	case trace.KindToolCall:
		if s.CallID != "" {
			return "call\x00" + s.CallID
		}
		return "call\x00\x00" + s.Agent + "\x00" + s.Tool + "\x00" + s.Args
	case trace.KindToolResult:
		if s.CallID != "" {
			return "result\x00" + s.CallID
		}
		return "result\x00\x00" + s.Text
	}
	return ""
}

// refinal marks the final answer again after a merge, where the mapping of
// spans marks it (package ingest's chat.MarkFinal): on the last assistant
// message, unless a tool call or a retry nudge comes after it.
func refinal(steps []trace.Step) {
	last := -1
	for i := range steps {
		s := &steps[i]
		if s.Kind == trace.KindFinal {
			s.Kind = trace.KindMessage
		}
		switch {
		case s.Kind == trace.KindToolCall || s.Type == trace.TypeRetryNudge:
			last = -1
		case s.Kind == trace.KindMessage && s.Role == trace.RoleAssistant:
			last = i
		}
	}
	if last >= 0 {
		steps[last].Kind = trace.KindFinal
	}
}

// mergeRun adds to m, a stored trace, what frag (its late spans mapped)
// says of the run as a whole: tokens, times, what it lacked, its root.
func mergeRun(m, frag *trace.Trace) {
	u, f := &m.Usage, frag.Usage
	u.InputTokens += f.InputTokens
	u.CachedInputTokens += f.CachedInputTokens
	u.OutputTokens += f.OutputTokens
	u.ReasoningTokens += f.ReasoningTokens
	u.TotalTokens += f.TotalTokens
	if !frag.Started.IsZero() && (m.Started.IsZero() || frag.Started.Before(m.Started)) {
		m.Started = frag.Started
	}
	if frag.Ended.After(m.Ended) {
		m.Ended = frag.Ended
	}
	for _, v := range []struct {
		dst *string
		src string
	}{{&m.Model, frag.Model}, {&m.System, frag.System}, {&m.Task, frag.Task}} {
		if *v.dst == "" {
			*v.dst = v.src
		}
	}
	meta := maps.Clone(m.Meta)
	if meta == nil {
		meta = map[string]string{}
	}
	for k, v := range frag.Meta {
		switch old, ok := meta[k]; {
		case k == trace.SpanTreeMeta:
			// A stored trace without a tree (stored before traces kept one,
			// or of too many spans) is not given a part of one.
			if ok {
				if tree := mergeSpanTrees(old, v); tree != "" {
					meta[k] = tree
				} else {
					delete(meta, k)
				}
			}
		case !ok:
			meta[k] = v
		case k == "otel.spans":
			a, _ := strconv.Atoi(old)
			b, _ := strconv.Atoi(v)
			meta[k] = strconv.Itoa(a + b)
		case k == "otel.conventions" || k == "models":
			list := strings.Split(old, ",")
			for _, x := range strings.Split(v, ",") {
				if !slices.Contains(list, x) {
					list = append(list, x)
				}
			}
			if k == "otel.conventions" {
				slices.Sort(list)
			}
			meta[k] = strings.Join(list, ",")
		}
	}
	if frag.Meta["otel.root_span_id"] != "" {
		delete(meta, "otel.incomplete") // the root came at last
	}
	m.Meta = meta
	for _, o := range frag.Outcomes {
		if !slices.ContainsFunc(m.Outcomes, func(s trace.Outcome) bool { return s.Source == o.Source }) {
			m.Outcomes = append(m.Outcomes, o)
		}
	}
}

// mergeSpanTrees adds to a stored span tree the spans of a fragment's that
// it lacks; "" when the two together are more than a trace keeps.
func mergeSpanTrees(stored, frag string) string {
	a := &trace.Trace{Meta: map[string]string{trace.SpanTreeMeta: stored}}
	b := &trace.Trace{Meta: map[string]string{trace.SpanTreeMeta: frag}}
	spans := a.Spans()
	have := map[string]bool{}
	for _, sp := range spans {
		have[sp.ID] = true
	}
	for _, sp := range b.Spans() {
		if !have[sp.ID] {
			have[sp.ID] = true
			spans = append(spans, sp)
		}
	}
	m := &trace.Trace{}
	m.SetSpans(spans)
	return m.Meta[trace.SpanTreeMeta]
}
