package receive

import "go.opentelemetry.io/collector/pdata/pcommon"

// recentIDs remembers the last traces handed to the store, at most n, with
// the ids of their spans, at most spans in all: a span that comes again for
// one of them (an exporter's retry of a request answered late) is known to
// be stored, and any other span of them is late, to be merged. A trace
// forgotten is still merged, once its spans are assembled on their own.
type recentIDs struct {
	ring  []pcommon.TraceID
	next  int
	set   map[pcommon.TraceID]int // id → how many times it is in ring
	spans map[pcommon.TraceID]map[pcommon.SpanID]bool
	held  int // span ids in spans
	max   int
}

func newRecentIDs(n, spans int) recentIDs {
	return recentIDs{ring: make([]pcommon.TraceID, 0, n), set: map[pcommon.TraceID]int{},
		spans: map[pcommon.TraceID]map[pcommon.SpanID]bool{}, max: spans}
}

func (s *recentIDs) has(id pcommon.TraceID) bool { return s.set[id] > 0 }

// hasSpan reports whether a span of a recent trace was handed to the store.
func (s *recentIDs) hasSpan(id pcommon.TraceID, span pcommon.SpanID) bool { return s.spans[id][span] }

// add records a trace handed to the store with its spans.
func (s *recentIDs) add(id pcommon.TraceID, spans map[pcommon.SpanID]bool) {
	if len(s.ring) == cap(s.ring) || s.held+len(spans) > s.max {
		s.forget()
	}
	if len(s.ring) < cap(s.ring) {
		s.ring = append(s.ring, id)
	} else {
		s.ring[s.next] = id
		s.next = (s.next + 1) % len(s.ring)
	}
	s.set[id]++
	known := s.spans[id]
	if known == nil {
		known = map[pcommon.SpanID]bool{}
		s.spans[id] = known
	}
	for sp := range spans {
		if !known[sp] && s.held < s.max {
			known[sp] = true
			s.held++
		}
	}
}

// forget drops the oldest trace when the ring is full, and the span ids of
// the oldest traces while there are too many.
func (s *recentIDs) forget() {
	if len(s.ring) == 0 {
		return
	}
	if len(s.ring) == cap(s.ring) {
		s.drop(s.ring[s.next])
	}
	for i := 0; s.held > s.max*3/4 && i < len(s.ring); i++ {
		id := s.ring[(s.next+i)%len(s.ring)]
		s.held -= len(s.spans[id])
		delete(s.spans, id)
	}
}

// drop removes one occurrence of id from the ring's count, about to be
// overwritten.
func (s *recentIDs) drop(id pcommon.TraceID) {
	if s.set[id]--; s.set[id] == 0 {
		delete(s.set, id)
		s.held -= len(s.spans[id])
		delete(s.spans, id)
	}
}
