package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/faultline/faultline/internal/store"
)

// ErrNoDatabase is returned by OpenReadOnly when no database exists at the
// path: reading never creates one.
var ErrNoDatabase = errors.New("no database")

// OpenReadOnly opens an existing database for reading only, for commands
// that only read: it creates nothing (no file, no directory, no migration),
// works on a file the user may not write, and can never change the data. A
// database of an older schema is refused with what to run to upgrade it.
func OpenReadOnly(ctx context.Context, path string) (*Store, error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w at %s", ErrNoDatabase, path)
	case err != nil:
		return nil, err
	case info.IsDir():
		return nil, fmt.Errorf("%s is a directory, not a database", path)
	}
	db, err := openConn(ctx, path, "mode=ro&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
	if err != nil {
		return nil, err
	}
	if err := checkReadable(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// checkReadable checks that the database is faultline's, at the schema this
// faultline reads.
func checkReadable(ctx context.Context, db *sql.DB) error {
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'`).Scan(&tables); err != nil {
		return fmt.Errorf("not a readable SQLite database: %w", err)
	}
	if tables == 0 {
		return errors.New("not a faultline database (it has no schema_version table)")
	}
	current, err := schemaVersion(ctx, db)
	if err != nil {
		return err
	}
	latest, err := latestVersion()
	if err != nil {
		return err
	}
	return store.ReadableSchema(current, latest)
}
