// Package postgres keeps faultline's traces, findings, outcomes, judge
// records and labels in a PostgreSQL database, for a team sharing one
// store: the same behaviour as the embedded SQLite backend (the store's
// conformance suite holds both to it), through pgx.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/faultline/faultline/ingest"
)

// Store is an open PostgreSQL database.
type Store struct {
	db *sql.DB
	// replaced, when set, lets a trace written through File replace a stored
	// one of more steps, and is told of each (see ReplaceFewerSteps).
	replaced func(ingest.FewerSteps)
}

// IsURL says whether a --db value names a PostgreSQL database rather than
// a SQLite file.
func IsURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// Redacted is the URL with its password hidden, for messages.
func Redacted(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "the PostgreSQL URL (unparsable)"
	}
	return u.Redacted()
}

// Open connects to the database the URL names and brings its schema up to
// date.
func Open(ctx context.Context, dsn string) (*Store, error) {
	db, where, err := connect(ctx, dsn, false)
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return &Store{db: db}, nil
}

// OpenReadOnly connects for reading only: it creates and migrates nothing,
// and every transaction is read-only, so the data cannot change. A
// database of another schema is refused with what to do.
func OpenReadOnly(ctx context.Context, dsn string) (*Store, error) {
	db, where, err := connect(ctx, dsn, true)
	if err != nil {
		return nil, err
	}
	if err := checkReadable(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return &Store{db: db}, nil
}

// maxConns bounds the connections a Store opens.
const maxConns = 8

// connect opens a pool on the database and checks that it answers. Its
// errors are one line naming the server, the database and the user and
// what failed, never the password; where names the database the same way
// for later messages.
func connect(ctx context.Context, dsn string, readOnly bool) (*sql.DB, string, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, "", fmt.Errorf("PostgreSQL URL: %s", parseProblem(err))
	}
	where := fmt.Sprintf("PostgreSQL database %q on %s:%d as %q", cfg.Database, cfg.Host, cfg.Port, cfg.User)
	if readOnly {
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
	}
	db := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(preferLZ4))
	// A few connections per process: a team's processes share the
	// server's (a hundred by default); a command's queries at once beyond
	// them (serve's concurrent requests) wait for one.
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, "", &connectError{msg: fmt.Sprintf("connecting to %s: %s", where, hidePassword(cause(err), cfg.Password)), err: err}
	}
	return db, where, nil
}

// preferLZ4 has the connection compress the long values it stores (a
// step's text and arguments, its search vector) with lz4 rather than the
// server's default, pglz, where the server has lz4 (PostgreSQL 14 and
// later, when built with it). Compressing with pglz took over a third of
// the server's CPU time in an ingest of 200 MB of rollouts; with lz4 the
// server's time went from 3.1 to 2.1 s and the database from 48 to 42 MB.
// Values already stored keep their compression; a server without lz4
// keeps pglz.
func preferLZ4(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, `SELECT set_config('default_toast_compression', 'lz4', false) FROM pg_settings
		WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)`)
	if err != nil {
		return fmt.Errorf("choosing lz4 compression: %w", err)
	}
	return nil
}

// connectError is a failure to connect, said in one line, that still
// unwraps to the driver's error (see Transient).
type connectError struct {
	msg string
	err error
}

func (e *connectError) Error() string { return e.msg }
func (e *connectError) Unwrap() error { return e.err }

// cause is what failed in connecting, without pgx's restatement of where
// (once per address and TLS mode it tried).
func cause(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return fmt.Sprintf("%s (SQLSTATE %s)", pgErr.Message, pgErr.Code)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.Error()
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return opErr.Error()
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) && connErr.Unwrap() != nil {
		err = connErr.Unwrap()
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// parseProblem says what is wrong with a URL pgx cannot read: the URL
// parser's complaint without the URL it quotes (password and all), or
// pgx's own message, which hides the password.
func parseProblem(err error) string {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err.Error()
	}
	return err.Error()
}

// hidePassword removes the password from a message should a server or a
// library ever quote it.
func hidePassword(msg, password string) string {
	if password == "" {
		return msg
	}
	return strings.ReplaceAll(msg, password, "********")
}

// ReplaceFewerSteps lets traces received through File replace stored traces
// of more steps, which are otherwise refused with a *ingest.FewerSteps error;
// replaced is told of each such replacement.
func (s *Store) ReplaceFewerSteps(replaced func(ingest.FewerSteps)) { s.replaced = replaced }

// Close closes the connections.
func (s *Store) Close() error { return s.db.Close() }

// Revision names the database's content as this moment's snapshot sees it:
// the transactions committed before it and those still running. It changes
// once any transaction commits (in any process, on any database of the
// server, which only costs a cached page), and never while none does, so a
// page computed from the database can be kept under it.
func (s *Store) Revision(ctx context.Context) (string, error) {
	var snap string
	if err := s.db.QueryRowContext(ctx, `SELECT pg_current_snapshot()::text`).Scan(&snap); err != nil {
		return "", fmt.Errorf("reading the snapshot: %w", err)
	}
	return snap, nil
}
