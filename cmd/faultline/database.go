package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/store/postgres"
	"github.com/faultline/faultline/internal/store/sqlite"
	"github.com/faultline/faultline/trace"
)

// backend is what the commands ask of a store, SQLite or PostgreSQL: the
// readers and writers they call themselves and those the packages they
// hand it to define.
type backend interface {
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

// database is an open store of either backend.
type database struct{ backend }

// storeBatch is a backend's batch of writes for an ingest of many files
// (or a receiver's stream of traces): what it holds is committed by Commit
// or, at the latest, by Close. Load reads through it, so that a trace it
// holds is seen, and SQLite's one connection, which the batch may hold, is
// not waited for.
type storeBatch interface {
	ingest.Sink
	Load(ctx context.Context, id string) (*trace.Trace, error)
	Commit(ctx context.Context) error
	Close(ctx context.Context) error
}

// closingSink is what every backend's batch has.
type closingSink interface {
	ingest.Sink
	Close(ctx context.Context) error
}

// Batch starts the backend's batch of writes.
func (d database) Batch() storeBatch {
	var b closingSink
	switch st := d.backend.(type) {
	case *sqlite.Store:
		b = st.Batch()
	case *postgres.Store:
		b = st.Batch()
	default:
		panic(fmt.Sprintf("faultline: no batch for a store of type %T", st))
	}
	return batch{closingSink: b, db: d}
}

// batch gives a backend's batch the reading and committing of storeBatch,
// the batch's own where it has them.
type batch struct {
	closingSink
	db database
}

func (b batch) Load(ctx context.Context, id string) (*trace.Trace, error) {
	if l, ok := b.closingSink.(interface {
		Load(ctx context.Context, id string) (*trace.Trace, error)
	}); ok {
		return l.Load(ctx, id)
	}
	return b.db.Load(ctx, id)
}

func (b batch) Commit(ctx context.Context) error {
	if c, ok := b.closingSink.(interface {
		Commit(ctx context.Context) error
	}); ok {
		return c.Commit(ctx)
	}
	return nil
}

// dbName is --db as messages may show it: a PostgreSQL URL without its
// password.
func (a *app) dbName() string { return displayDB(a.dbPath) }

func displayDB(db string) string {
	if postgres.IsURL(db) {
		return postgres.Redacted(db)
	}
	return db
}

// openStore opens the database named by --db (a SQLite file, or a
// postgres:// URL), creating it if needed.
func (a *app) openStore(ctx context.Context) (database, error) {
	var st backend
	var err error
	if postgres.IsURL(a.dbPath) {
		st, err = postgres.Open(ctx, a.dbPath)
	} else {
		st, err = sqlite.Open(ctx, a.dbPath)
	}
	if err != nil {
		return database{}, fmt.Errorf("database: %w", err)
	}
	return database{st}, nil
}

// readStore opens the database named by --db for a command that only
// reads: it never creates one, and works on a file (or as a PostgreSQL
// user) that cannot write.
func (a *app) readStore(ctx context.Context) (database, error) {
	var st backend
	var err error
	if postgres.IsURL(a.dbPath) {
		st, err = postgres.OpenReadOnly(ctx, a.dbPath)
	} else {
		st, err = sqlite.OpenReadOnly(ctx, a.dbPath)
	}
	switch {
	case errors.Is(err, sqlite.ErrNoDatabase), errors.Is(err, postgres.ErrNoDatabase):
		return database{}, fmt.Errorf("%w: ingest traces first (faultline ingest PATH), or point --db or $FAULTLINE_DB at a database", err)
	case err != nil:
		return database{}, fmt.Errorf("database: %w", err)
	}
	return database{st}, nil
}
