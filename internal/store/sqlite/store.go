// Package store keeps traces, their steps, findings and outcomes in an
// embedded SQLite database (pure Go, no cgo). Re-ingesting a file whose
// content is unchanged is a no-op; a changed file replaces its traces
// (keeping the labels and scores added to them), but a trace is not
// replaced by a version of fewer steps unless the caller allows it (see
// FewerSteps).
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"

	"modernc.org/sqlite" // also registers the "sqlite" driver
)

// Store is an open database.
type Store struct {
	db *sql.DB
	// shared holds the statements of trace writes, prepared once (see
	// sharedQueries).
	shared map[string]*sql.Stmt
	// commits counts the write transactions this Store has committed (see
	// Revision).
	commits atomic.Int64
	// replaced, when set, lets a trace written through File replace a stored
	// one of more steps, and is told of each (see ReplaceFewerSteps).
	replaced func(ingest.FewerSteps)
	// lookups is the read connection of a Batch's file lookups.
	lookups lookups
}

// ReplaceFewerSteps lets traces received through File replace stored traces
// of more steps, which are otherwise refused with a *ingest.FewerSteps error;
// replaced is told of each such replacement.
func (s *Store) ReplaceFewerSteps(replaced func(ingest.FewerSteps)) { s.replaced = replaced }

// Open opens (creating if needed) the database at path and brings its schema
// up to date.
func Open(ctx context.Context, path string) (*Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	if err := create(ctx, path); err != nil {
		return nil, err
	}
	// Transactions begin IMMEDIATE, taking the write lock at once: every one
	// of them writes, and a read inside one (such as the stored step count a
	// new trace is checked against) then holds until it commits, whatever
	// another process writes meanwhile. busy_timeout comes first: switching a
	// new database to WAL takes a lock another opener may hold. Temporary
	// storage in memory: a statement whose triggers write several tables
	// (every step, finding and outcome insert) keeps a statement journal,
	// which would otherwise be a temporary file written page by page (half
	// of an ingest's write calls).
	db, err := openConn(ctx, path, "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=temp_store(MEMORY)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	shared, err := prepareShared(ctx, db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Store{db: db, shared: shared, lookups: lookups{path: path}}, nil
}

// pageSize is the page size of a new database. Whole-store readers (the
// cohort report, the dashboard) read every page of the trace summary, and
// SQLite reads a page per system call: at 16 KiB a report on 100,000 traces
// makes a quarter of the calls it made at SQLite's default of 4 KiB and
// takes a fifth less time. Large tool outputs also span fewer overflow pages.
const pageSize = 16384

// create makes a new database file with pageSize pages. The size is fixed
// when the file is first written, and switching to WAL writes it, so this
// must happen before the connection Open uses, whose pragmas put WAL first.
// A file that exists keeps the page size it has.
func create(ctx context.Context, path string) error {
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	db, err := openConn(ctx, path, fmt.Sprintf("_pragma=busy_timeout(10000)&_pragma=page_size(%d)", pageSize))
	if err != nil {
		return err
	}
	defer db.Close()
	err = retryBusy(ctx, func() error {
		_, err := db.ExecContext(ctx, "PRAGMA journal_mode=WAL")
		return err
	})
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	return db.Close()
}

// openConn opens the database at path with the DSN parameters given, on
// one connection: one writer at a time is how SQLite works, and a single
// connection also keeps the pragmas in force for every statement.
func openConn(ctx context.Context, path, params string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?"+params)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if err := connect(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return db, nil
}

// connect opens the one connection, applying the pragmas (see retryBusy).
func connect(ctx context.Context, db *sql.DB) error {
	return retryBusy(ctx, func() error { return db.PingContext(ctx) })
}

// retryBusy runs try until it does not fail busy, for as long as
// busy_timeout would have waited. Switching a database to WAL needs an
// exclusive lock, and SQLite reports a clash with another process opening
// or creating it at the same moment as busy at once rather than waiting (the
// wait could deadlock): two ingests started together on a new database
// failed so about once in ten.
func retryBusy(ctx context.Context, try func() error) error {
	deadline := time.Now().Add(10 * time.Second)
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, 500*time.Millisecond) {
		err := try()
		var sqliteErr *sqlite.Error
		if err == nil || !errors.As(err, &sqliteErr) || sqliteErr.Code()&0xff != sqliteBusy || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}

// sqliteBusy is SQLITE_BUSY, the primary result code of every busy error.
const sqliteBusy = 5

// Close closes the database.
func (s *Store) Close() error {
	closeAll(s.shared)
	return errors.Join(s.lookups.close(), s.db.Close())
}

// commit commits a write transaction and counts it.
func (s *Store) commit(tx *sql.Tx) error {
	if err := tx.Commit(); err != nil {
		return err
	}
	s.commits.Add(1)
	return nil
}

// Revision names the database's content: it changes once a write through
// this Store commits, or another process commits one (SQLite's
// data_version, which the one connection of this Store sees change only for
// others' commits). A page computed from the database can be kept under it.
func (s *Store) Revision(ctx context.Context) (string, error) {
	var others int64
	if err := s.db.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&others); err != nil {
		return "", fmt.Errorf("reading the data version: %w", err)
	}
	return fmt.Sprintf("%d.%d", s.commits.Load(), others), nil
}

// File implements ingest.Sink. It returns nil when the file's content is
// already stored under the same path; otherwise its traces replace those it
// held before, each stored whole or not at all. A trace with fewer steps
// than the one stored under its id is refused (see FewerSteps) unless
// ReplaceFewerSteps allows it; a file with a refused or failed trace is not
// recorded as ingested, so that it is read, and reported, again.
//
// Writes are committed a few traces at a time (see batchTime), never a
// whole file in one transaction: a large file must not hold SQLite's one
// write lock for as long as it takes to read, while another ingest, the
// receiver or a labeller waits. A file cut short by a crash or an
// interruption leaves the traces it had committed, whole, and is not
// recorded, so the next ingest reads it again and ends where a clean run
// would. Its last traces are committed with it, at Close; a Batch shares
// transactions between files instead.
func (s *Store) File(ctx context.Context, f ingest.FileInfo) (ingest.FileSink, error) {
	return (&Batch{s: s, perFile: true}).File(ctx, f)
}

// ReplaceFindings swaps every finding of one source on a trace for the given
// ones, and records which detector set produced them when detectedWith is set.
func (s *Store) ReplaceFindings(ctx context.Context, traceID, source string, findings []trace.Finding, detectedWith string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM findings WHERE trace_id = ? AND source = ?`, traceID, source); err != nil {
		return fmt.Errorf("trace %s: %w", traceID, err)
	}
	w := s.newWriter(tx)
	defer w.close()
	if err := w.putFindings(ctx, traceID, findings); err != nil {
		return err
	}
	if detectedWith != "" {
		if _, err := tx.ExecContext(ctx, `UPDATE traces SET detected_with = ? WHERE id = ?`, detectedWith, traceID); err != nil {
			return fmt.Errorf("trace %s: %w", traceID, err)
		}
	}
	return s.commit(tx)
}

// PutOutcome stores (or replaces) one source's outcome for a trace.
func (s *Store) PutOutcome(ctx context.Context, traceID string, o trace.Outcome) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	w := s.newWriter(tx)
	defer w.close()
	if err := w.putOutcome(ctx, traceID, o); err != nil {
		return err
	}
	return s.commit(tx)
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func parseTimeText(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return "{}"
	}
	return string(b)
}

func nullInt(p *int) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: int64(*p), Valid: true}
}

// likeEscape escapes LIKE wildcards so a user's text matches literally.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
