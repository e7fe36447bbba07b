package ingest

import "fmt"

// FewerSteps is a trace arriving with fewer steps than the version stored
// under its id: most often from a truncated copy of the file it was read
// from, or from that file cut short since. As an error it is the refusal to
// store it, which matches ErrRefused, so the file's other traces are
// still stored.
type FewerSteps struct {
	ID         string
	Stored     int    // steps stored
	StoredFrom string // the file the stored version came from, as FileInfo.Path names it
	Incoming   int    // steps arriving
	File       string // the file they arrive from, as FileInfo.Path names it
}

func (e *FewerSteps) Error() string {
	from, guess := e.StoredFrom, "a truncated copy?"
	if e.StoredFrom == e.File {
		from, guess = "an earlier version of this file", "was it cut short?"
	}
	return fmt.Sprintf("trace %s: %d steps are stored (from %s); this file has %d; not replaced, since that would lose %d steps (%s)",
		e.ID, e.Stored, from, e.Incoming, e.Stored-e.Incoming, guess)
}

// Is makes a refusal match ErrRefused.
func (e *FewerSteps) Is(target error) bool { return target == ErrRefused }
