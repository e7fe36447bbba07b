package postgres

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/faultline/faultline/internal/store"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// step is one embedded schema change, numbered as its SQLite counterpart.
type step struct {
	version int
	file    string
	sql     string
}

// steps reads the embedded migrations, by version.
func steps() ([]step, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []step
	for _, e := range entries {
		prefix, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(prefix)
		if err != nil {
			return nil, fmt.Errorf("migration %s has no version number", e.Name())
		}
		body, err := fs.ReadFile(migrationFiles, path.Join("migrations", e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, step{version: v, file: e.Name(), sql: string(body)})
	}
	slices.SortFunc(out, func(a, b step) int { return a.version - b.version })
	return out, nil
}

// SchemaVersion is the schema version this faultline writes and reads.
func SchemaVersion() int {
	all, err := steps()
	if err != nil || len(all) == 0 {
		return 0
	}
	return all[len(all)-1].version
}

// migrationLock is the advisory lock key under which a process migrates,
// so that two opening a new database at once apply each change once.
const migrationLock = 0x6661756c746c696e // "faultlin"

// migrate applies every embedded migration newer than the database's
// version, each in its own transaction under the advisory lock, and
// refuses a database of a newer faultline.
func migrate(ctx context.Context, db *sql.DB) error {
	all, err := steps()
	if err != nil {
		return err
	}
	latest := all[len(all)-1].version
	for _, m := range all {
		if err := apply(ctx, db, m, latest); err != nil {
			return err
		}
	}
	return nil
}

func apply(ctx context.Context, db *sql.DB, m step, latest int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migration %s: %w", m.file, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("migration %s: waiting for another process's: %w", m.file, err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("creating schema_version: %w", err)
	}
	current, err := version(ctx, tx)
	if err != nil {
		return err
	}
	if current > latest {
		return store.NewerSchema(current, latest)
	}
	if current >= m.version {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("migration %s: %w", m.file, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES ($1)`, m.version); err != nil {
		return fmt.Errorf("migration %s: recording it: %w", m.file, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migration %s: %w", m.file, err)
	}
	return nil
}

// rowReader is a database or a transaction, for reading the version.
type rowReader interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func version(ctx context.Context, q rowReader) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading the schema version: %w", err)
	}
	return v, nil
}

// checkReadable checks that the database is faultline's, at the schema this
// faultline reads.
func checkReadable(ctx context.Context, db *sql.DB) error {
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT to_regclass('schema_version') IS NOT NULL`).Scan(&exists); err != nil {
		return fmt.Errorf("reading the schema: %w", err)
	}
	if !exists {
		return fmt.Errorf("%w: it has no faultline schema; ingest traces into it first (faultline ingest PATH)", ErrNoDatabase)
	}
	current, err := version(ctx, db)
	if err != nil {
		return err
	}
	return store.ReadableSchema(current, SchemaVersion())
}

// ErrNoDatabase is returned by OpenReadOnly for a database that holds no
// faultline schema: reading never creates one.
var ErrNoDatabase = fmt.Errorf("no faultline database")
