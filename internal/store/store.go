// Package store is faultline's persistence vocabulary: the traces,
// findings, outcomes, judge records and labels a database holds, in the
// shapes its users ask for them (a filtered list, a page, a cohort in bulk,
// mode verdicts, judge records). It holds no database code: backends
// implement what each user needs, behind the small interfaces those users
// define (analyze's cohort loader, eval's verdict reader, the judge's
// record store), and the SQLite backend, store/sqlite, is the embedded one.
package store

import "errors"

// DefaultPath is where the database lives unless --db says otherwise.
const DefaultPath = ".faultline/faultline.db"

// ErrNotFound is returned when a trace does not exist.
var ErrNotFound = errors.New("not found")

// ErrBadCursor is returned for a cursor that no page gave out (or one of
// another sort order).
var ErrBadCursor = errors.New("bad page cursor")

// ErrEmptySearch is returned for a search with no word in it.
var ErrEmptySearch = errors.New("the search has no word to look for")
