package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/store/backend"
	"github.com/faultline/faultline/internal/store/open"
	"github.com/faultline/faultline/internal/store/postgres"
	"github.com/faultline/faultline/internal/store/sqlite"
	"github.com/faultline/faultline/trace"
)

// database is an open store of either backend.
type database struct{ backend.Store }

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

// Batch starts the backend's batch of writes.
func (d database) Batch() storeBatch {
	switch st := d.Store.(type) {
	case *sqlite.Store:
		return st.Batch()
	case *postgres.Store:
		return st.Batch()
	}
	panic(fmt.Sprintf("faultline: no batch for a store of type %T", d.Store))
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
	st, err := open.Store(ctx, a.dbPath)
	if err != nil {
		return database{}, fmt.Errorf("database: %w", err)
	}
	return database{st}, nil
}

// readStore opens the database named by --db for a command that only
// reads: it never creates one, and works on a file (or as a PostgreSQL
// user) that cannot write.
func (a *app) readStore(ctx context.Context) (database, error) {
	st, err := open.ReadOnly(ctx, a.dbPath)
	switch {
	case errors.Is(err, sqlite.ErrNoDatabase), errors.Is(err, postgres.ErrNoDatabase):
		return database{}, fmt.Errorf("%w: ingest traces first (faultline ingest PATH), or point --db or $FAULTLINE_DB at a database", err)
	case err != nil:
		return database{}, fmt.Errorf("database: %w", err)
	}
	return database{st}, nil
}
