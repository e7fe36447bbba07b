package web

import (
	"context"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/discover"
	"github.com/faultline/faultline/internal/eval"
	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/internal/pipeline"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// Store is what the web UI reads and writes: the SQLite backend, or any
// other that answers the same. Most of it is what the packages the pages
// call need (the cohort report, the agreement tables, label storage); the
// rest is browsing.
type Store interface {
	analyze.CohortLoader
	discover.Reader
	eval.VerdictSource
	eval.StepReader
	pipeline.LabelStore
	// Revision names the store's content: it changes with every write, so
	// that kept pages can tell they are stale.
	Revision(ctx context.Context) (string, error)
	// Resolve names the trace an id or a unique prefix of one names.
	Resolve(ctx context.Context, idOrPrefix string) (string, error)
	Browse(ctx context.Context, q store.TraceQuery) (*store.Page, error)
	Count(ctx context.Context, q store.TraceQuery) (int, error)
	IDs(ctx context.Context, q store.TraceQuery) ([]string, error)
	List(ctx context.Context, f store.Filter) ([]store.Summary, error)
	// Values lists the distinct values of a trace field.
	Values(ctx context.Context, field string) ([]string, error)
	AllSources(ctx context.Context) ([]string, error)
	DecidesModes(ctx context.Context, source string) (bool, error)
	TracesAnnotatedBy(ctx context.Context, sources []string) ([]string, error)
	SearchHits(ctx context.Context, search string, ids []string) (map[string]store.SearchHit, error)
	StepRange(ctx context.Context, id string, from, to int) ([]trace.Step, error)
	Findings(ctx context.Context, traceID string) ([]trace.Finding, error)
	// DetectedWith returns, by trace id, the detector set whose findings
	// each trace carries.
	DetectedWith(ctx context.Context, ids []string) (map[string]string, error)
	// ModeVerdicts streams the findings with a mode of the selected sources
	// on the given traces.
	ModeVerdicts(ctx context.Context, ids []string, sources []string, fn func(store.ModeVerdict) error) error
	TraceJudgements(ctx context.Context, traceID string) ([]store.JudgeRecord, error)
	ExportLabels(ctx context.Context, source string) ([]labels.ModeLabel, error)
	LabelledTraces(ctx context.Context, source string) (int, error)
}
