package store

import "github.com/faultline/faultline/trace"

// FindingQuery selects the findings a bulk read streams, so that a reader
// after a few kinds of finding (one source's, one raw label's) over a
// whole cohort asks once rather than once per trace.
type FindingQuery struct {
	// Sources are selected as MatchSource selects them; every source when
	// empty.
	Sources []string
	// RawLabel, when set, keeps only the findings with that raw label.
	RawLabel string
}

// Match reports whether a finding is one q selects.
func (q FindingQuery) Match(f trace.Finding) bool {
	return MatchSource(f.Source, q.Sources) && (q.RawLabel == "" || f.RawLabel == q.RawLabel)
}

// TraceFinding is a stored finding and the trace it is on.
type TraceFinding struct {
	Trace string
	trace.Finding
}
