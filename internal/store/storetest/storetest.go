// Package storetest is the conformance suite of faultline's store
// backends: the same test functions, run against each backend (SQLite from
// its package's tests, PostgreSQL from its), hold them to the same answers
// for everything the commands ask of a store.
package storetest

import (
	"context"
	"testing"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// Store is what the suite checks: the methods the commands use.
type Store interface {
	ingest.Sink
	ReplaceFewerSteps(replaced func(ingest.FewerSteps))
	Close() error
	Revision(ctx context.Context) (string, error)
	ReplaceFindings(ctx context.Context, traceID, source string, findings []trace.Finding, detectedWith string) error
	PutOutcome(ctx context.Context, traceID string, o trace.Outcome) error

	List(ctx context.Context, f store.Filter) ([]store.Summary, error)
	Resolve(ctx context.Context, idOrPrefix string) (string, error)
	Load(ctx context.Context, id string) (*trace.Trace, error)
	LoadHeader(ctx context.Context, id string) (*trace.Trace, int, error)
	StepRange(ctx context.Context, id string, from, to int) ([]trace.Step, error)
	StepsAt(ctx context.Context, id string, idx []int) ([]trace.Step, error)
	Findings(ctx context.Context, traceID string) ([]trace.Finding, error)
	DetectedWith(ctx context.Context, ids []string) (map[string]string, error)
	Sources(ctx context.Context, ids []string) ([]string, error)

	Browse(ctx context.Context, q store.TraceQuery) (*store.Page, error)
	Count(ctx context.Context, q store.TraceQuery) (int, error)
	IDs(ctx context.Context, q store.TraceQuery) ([]string, error)
	TracesAnnotatedBy(ctx context.Context, sources []string) ([]string, error)
	Values(ctx context.Context, field string) ([]string, error)
	AllSources(ctx context.Context) ([]string, error)
	DecidesModes(ctx context.Context, source string) (bool, error)
	SearchHits(ctx context.Context, search string, ids []string) (map[string]store.SearchHit, error)

	LoadCohort(ctx context.Context, ids []string, sources []string, mark func(store.Mark)) (*store.Cohort, error)
	ModeVerdicts(ctx context.Context, ids []string, sources []string, fn func(store.ModeVerdict) error) error
	TraceVerdicts(ctx context.Context, ids []string, fn func(store.TraceVerdicts) error) error

	JudgeRecords(ctx context.Context, source string, ids []string) (map[string]store.JudgeRecord, error)
	TraceJudgements(ctx context.Context, traceID string) ([]store.JudgeRecord, error)
	PutJudgement(ctx context.Context, r store.JudgeRecord, findings []trace.Finding) error
	CachedAnswer(ctx context.Context, key string) (*store.CacheEntry, error)
	PutCachedAnswer(ctx context.Context, e store.CacheEntry) error

	ExportLabels(ctx context.Context, source string) ([]labels.ModeLabel, error)
	LabelledTraces(ctx context.Context, source string) (int, error)
}

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
