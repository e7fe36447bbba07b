package store

// TraceQuery selects, orders and pages traces for browsing (faultline
// serve's trace list). Unlike Filter it is answered by SQL alone, a page at
// a time, so that a page costs the same on a hundred traces as on a hundred
// thousand.
type TraceQuery struct {
	// Model, System, Scenario, Format, Aliases, Outcome, Sources, Modes
	// and Search select as a Filter's fields of the same names do.
	Model, System, Scenario, Format []string
	Aliases                         ModelAliases
	Outcome                         string
	Sources                         []string
	Modes                           []string
	Search                          string
	// ModeCount, when set, keeps the traces with exactly that many distinct
	// MAST modes marked present by the selected sources.
	ModeCount *int
	// Unlabelled keeps the traces with no finding of this source: the work
	// left to a labeller.
	Unlabelled string
	// Sort is one of SortOrders (default "id"); Desc reverses it.
	Sort string
	Desc bool
	// After and Before are cursors from a Page: the page after its last
	// trace, or before its first. At most one is set.
	After, Before string
	Limit         int // traces per page; 50 when 0
}

// Filter is the part of the query that selects traces, as a Filter.
func (q *TraceQuery) Filter() Filter {
	return Filter{Model: q.Model, System: q.System, Scenario: q.Scenario, Format: q.Format, Aliases: q.Aliases,
		Outcome: q.Outcome, Sources: q.Sources, Modes: q.Modes, Search: q.Search}
}

// SortOrders are the orders a TraceQuery can sort by, each paged by an index.
var SortOrders = []string{"id", "model", "started", "steps"}

// Page is one page of traces.
type Page struct {
	Traces []Summary
	// Next and Prev are the cursors of the pages after and before this one,
	// "" when there is none.
	Next, Prev string
}

// SearchHit is where a search matched in one trace.
type SearchHit struct {
	Steps []int // the first matching steps, in order
	Count int   // matching steps in all
}
