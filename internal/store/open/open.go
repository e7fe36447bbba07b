// Package open opens the store a database name names: a postgres:// (or
// postgresql://) URL is a PostgreSQL database, anything else the path of
// a SQLite file. The command line and the benches open stores through it.
package open

import (
	"context"

	"github.com/faultline/faultline/internal/store/backend"
	"github.com/faultline/faultline/internal/store/postgres"
	"github.com/faultline/faultline/internal/store/sqlite"
)

// Store opens the database for reading and writing, creating it (the
// SQLite file, the PostgreSQL schema) when needed.
func Store(ctx context.Context, db string) (backend.Store, error) {
	if postgres.IsURL(db) {
		return postgres.Open(ctx, db)
	}
	return sqlite.Open(ctx, db)
}

// ReadOnly opens an existing database for reading only: it creates
// nothing, and works where writing is not allowed.
func ReadOnly(ctx context.Context, db string) (backend.Store, error) {
	if postgres.IsURL(db) {
		return postgres.OpenReadOnly(ctx, db)
	}
	return sqlite.OpenReadOnly(ctx, db)
}
