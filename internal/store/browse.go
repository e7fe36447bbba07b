package store

// TraceQuery selects, orders and pages traces for browsing (faultline
// serve's trace list). Unlike Filter it is answered by SQL alone, a page at
// a time, so that a page costs the same on a hundred traces as on a hundred
// thousand.
type TraceQuery struct {
	// Model, System, Scenario and Format keep the traces whose field is one
	// of the values given (the empty string included); nil keeps all.
	Model, System, Scenario, Format []string
	// Outcome is "success", "failure" or "unknown", of the primary outcome.
	Outcome string
	// Sources selects, as MatchSource does, the annotation sources whose
	// findings Modes and ModeCount look at; empty selects every source.
	Sources []string
	// Modes keeps the traces on which a selected source marks every one of
	// these modes present.
	Modes []string
	// ModeCount, when set, keeps the traces with exactly that many distinct
	// MAST modes marked present by the selected sources.
	ModeCount *int
	// Search keeps the traces with a step holding these words (see
	// SearchQuery).
	Search string
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
