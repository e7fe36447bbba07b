// Package backend names what a store backend offers faultline's commands,
// the SQLite and the PostgreSQL one alike: the command line opens one of
// them as a Store, and the conformance suite (storetest) holds both to the
// same answers through it. The packages a command hands the store to read
// it through smaller interfaces of their own.
package backend

import (
	"context"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// Store is an open database of either backend.
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
	EachFinding(ctx context.Context, ids []string, q store.FindingQuery, fn func(store.TraceFinding) error) error
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
	PickSteps(ctx context.Context, ids []string, p store.StepPick, fn func(store.PickedSteps) error) error

	JudgeRecords(ctx context.Context, source string, ids []string) (map[string]store.JudgeRecord, error)
	TraceJudgements(ctx context.Context, traceID string) ([]store.JudgeRecord, error)
	PutJudgement(ctx context.Context, r store.JudgeRecord, findings []trace.Finding) error
	CachedAnswer(ctx context.Context, key string) (*store.CacheEntry, error)
	PutCachedAnswer(ctx context.Context, e store.CacheEntry) error

	ExportLabels(ctx context.Context, source string) ([]labels.ModeLabel, error)
	LabelledTraces(ctx context.Context, source string) (int, error)
}
