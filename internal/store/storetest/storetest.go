// Package storetest is the conformance suite of faultline's store
// backends: the same test functions, run against each backend (SQLite from
// its package's tests, PostgreSQL from its), hold them to the same answers
// for everything the commands ask of a store.
package storetest

import (
	"context"
	"testing"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/store/backend"
)

// Store is what the suite checks: what the commands use of a backend.
type Store = backend.Store

// Opener opens a new, empty store for one test; the store is closed by the
// suite.
type Opener func(t *testing.T) Store

// Tests are the suite's tests by name; Run runs them all.
var Tests = []struct {
	Name string
	Test func(t *testing.T, open Opener)
}{
	{"WriteAndLoad", TestWriteAndLoad},
	{"Resolve", TestResolve},
	{"Reingest", TestReingest},
	{"FewerSteps", TestFewerSteps},
	{"ListFilters", TestListFilters},
	{"Browse", TestBrowse},
	{"Search", TestSearch},
	{"Cohort", TestCohort},
	{"Verdicts", TestVerdicts},
	{"EachFinding", TestEachFinding},
	{"Judge", TestJudge},
	{"Labels", TestLabels},
	{"Revision", TestRevision},
}

// Run runs every test of the suite against the backend open opens.
func Run(t *testing.T, open Opener) {
	for _, tc := range Tests {
		t.Run(tc.Name, func(t *testing.T) { tc.Test(t, open) })
	}
}

// openFilled opens a store holding the fixture cohort, ingested from one
// file.
func openFilled(t *testing.T, open Opener) Store {
	t.Helper()
	st := open(t)
	t.Cleanup(func() { st.Close() })
	if _, err := ingest.StoreFile(context.Background(), st, ingest.FileInfo{Path: "/data/run/cohort.jsonl", Hash: "h1", Format: "codex"}, Cohort()...); err != nil {
		t.Fatalf("storing the cohort: %v", err)
	}
	return st
}
