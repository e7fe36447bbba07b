package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/faultline/faultline/internal/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migration is one embedded schema change.
type migration struct {
	version int
	name    string
	body    string
}

// migrationList returns the embedded migrations in order.
func migrationList() ([]migration, error) {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []migration
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		num, _, _ := strings.Cut(base, "_")
		version, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number", base)
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: version, name: base, body: string(body)})
	}
	return out, nil
}

// latestVersion is the schema version this faultline writes.
func latestVersion() (int, error) {
	list, err := migrationList()
	if err != nil || len(list) == 0 {
		return 0, err
	}
	return list[len(list)-1].version, nil
}

// migrate applies, in order and each in its own transaction, every embedded
// migration newer than the database's recorded version. Two processes may
// open a new database at once, so each transaction re-reads the version after
// taking the write lock (transactions begin IMMEDIATE) and skips a migration
// the other process applied meanwhile.
func migrate(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("creating schema_version: %w", err)
	}
	list, err := migrationList()
	if err != nil {
		return err
	}
	for _, m := range list {
		if err := applyMigration(ctx, db, m.version, m.body); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	current, err := schemaVersion(ctx, db)
	if err != nil {
		return err
	}
	latest, err := latestVersion()
	if err != nil {
		return err
	}
	if current > latest {
		return store.NewerSchema(current, latest)
	}
	return nil
}

// applyMigration runs one migration unless the database already has it.
func applyMigration(ctx context.Context, db *sql.DB, version int, body string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	current, err := schemaVersion(ctx, tx)
	if err != nil {
		return err
	}
	if version <= current {
		return nil
	}
	if _, err := tx.ExecContext(ctx, body); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (?)`, version); err != nil {
		return err
	}
	return tx.Commit()
}

// rowQuerier is what schemaVersion needs of a database or a transaction.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func schemaVersion(ctx context.Context, q rowQuerier) (int, error) {
	var current int
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&current); err != nil {
		return 0, fmt.Errorf("reading schema version: %w", err)
	}
	return current, nil
}
