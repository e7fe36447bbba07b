package store

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

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

// Paging checks what q asks of a page beyond its selection and fills in
// the defaults: the sort order (one of SortOrders, "id" when unset) and the
// page size (50 when unset).
func (q *TraceQuery) Paging() (order string, limit int, err error) {
	order = cmp.Or(q.Sort, "id")
	if !slices.Contains(SortOrders, order) {
		return "", 0, fmt.Errorf("cannot sort by %q: use one of %s", q.Sort, strings.Join(SortOrders, ", "))
	}
	if q.After != "" && q.Before != "" {
		return "", 0, fmt.Errorf("%w: after and before together", ErrBadCursor)
	}
	limit = q.Limit
	if limit <= 0 {
		limit = 50
	}
	return order, limit, nil
}

// A cursor is the sort key and id of a page's edge trace, as base64 JSON:
// opaque to users, and checked when read back. Its values are those the
// backend compares, so that the next page starts right after the edge.

// EncodeCursor writes the cursor of a page's edge trace sm in a sort
// order; started is its start time as the backend stores it.
func EncodeCursor(order string, sm Summary, started string) string {
	var key []any
	switch order {
	case "model":
		key = []any{sm.Model}
	case "started":
		key = []any{started}
	case "steps":
		key = []any{sm.Steps}
	}
	b, _ := json.Marshal(append(key, sm.ID))
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor reads a cursor of the sort order back into its values,
// typed as the backends' columns are: the step count an int64, the rest
// strings. A cursor no page of the order gave out is ErrBadCursor.
func DecodeCursor(cursor, order string) ([]any, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return nil, ErrBadCursor
	}
	var values []any
	keys := 2
	if order == "id" {
		keys = 1
	}
	if json.Unmarshal(raw, &values) != nil || len(values) != keys {
		return nil, ErrBadCursor
	}
	for i, v := range values {
		if n, ok := v.(float64); ok && order == "steps" && i == 0 {
			values[i] = int64(n)
		} else if _, ok := v.(string); !ok {
			return nil, ErrBadCursor
		}
	}
	return values, nil
}
