package store

import (
	"strings"
	"time"

	"github.com/faultline/faultline/trace"
)

// Filter selects traces: the filters every command that selects traces
// takes (ls, report, export, judge, eval), with the same names and meaning.
// Empty fields match everything.
type Filter struct {
	// Model, System, Scenario and Format keep the traces whose field is one
	// of the values given; nil keeps all. A model matches by its canonical
	// name (see ModelAliases), so that one value selects every way the
	// model is written.
	Model, System, Scenario, Format []string
	// Aliases names models canonically for Model; nil applies the built-in
	// rules alone.
	Aliases ModelAliases
	// Outcome is "success", "failure" or "unknown" (no decided outcome).
	Outcome string
	// Sources keeps the traces annotated by one of these annotation sources,
	// selected as MatchSource selects them: a finding of any verdict, or for
	// the detectors a run of the detector set (their silence is a verdict).
	// The findings of these sources alone count for Modes. Empty keeps every
	// trace and counts every source.
	Sources []string
	// Modes keeps the traces on which a selected source marks every one of
	// these modes (MAST or SYS codes) present.
	Modes []string
	// Search keeps the traces with a step holding these words: every word,
	// or "quoted phrase", in one step; a word ending in * is a prefix.
	Search string
	// Paths keeps traces ingested from these files or from files under these directories.
	Paths []string
	// Select, when set, keeps only the traces it names (possibly none).
	Select *Selection
	Limit  int
}

// Selection names traces by id or by the file they came from.
type Selection struct {
	IDs   []string
	Files []string // file keys as ingest.FileInfo.Path gives them
}

// Outcomes a Filter accepts.
var OutcomeFilters = []string{"success", "failure", "unknown"}

// Summary is a trace without its steps.
type Summary struct {
	ID       string          `json:"id"`
	Format   string          `json:"format"`
	System   string          `json:"system"`
	Model    string          `json:"model"`
	Task     string          `json:"task"`
	Scenario string          `json:"scenario,omitempty"`
	Trial    string          `json:"trial,omitempty"`
	Steps    int             `json:"steps"`
	Source   string          `json:"source"`
	Outcome  *trace.Outcome  `json:"outcome"`
	Outcomes []trace.Outcome `json:"-"`
	Started  time.Time       `json:"-"` // set by Browse
}

// OutcomeClass names a primary outcome as the Outcome filter does:
// success, failure, or unknown when none is decided.
func OutcomeClass(o *trace.Outcome) string {
	switch {
	case o == nil || o.Success == nil:
		return "unknown"
	case *o.Success:
		return "success"
	default:
		return "failure"
	}
}

// MatchSource reports whether an annotation source is selected by a list of
// source names or prefixes; an empty list selects every source.
func MatchSource(source string, selected []string) bool {
	if len(selected) == 0 {
		return true
	}
	for _, want := range selected {
		if source == want || strings.HasPrefix(source, want+":") {
			return true
		}
	}
	return false
}
