package postgres

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/store/postgres/pgtest"
	"github.com/faultline/faultline/internal/store/storetest"
	"github.com/faultline/faultline/trace"
)

func open(t *testing.T) *Store {
	t.Helper()
	st, err := Open(context.Background(), pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// withCohort opens a store holding storetest's cohort, as one file.
func withCohort(t *testing.T) (*Store, []*trace.Trace) {
	t.Helper()
	st := open(t)
	t.Cleanup(func() { st.Close() })
	cohort := storetest.Cohort()
	if _, err := ingest.StoreFile(context.Background(), st, ingest.FileInfo{Path: "/data/cohort.jsonl", Hash: "h1", Format: "codex"}, cohort...); err != nil {
		t.Fatal(err)
	}
	return st, cohort
}

// TestConformance runs the store's conformance suite on PostgreSQL.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return open(t) })
}

// TestNewerSchema refuses a database a newer faultline migrated, naming
// both versions, for writing and for reading.
func TestNewerSchema(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	st, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.db.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (99)`); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for name, open := range map[string]func(context.Context, string) (*Store, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
		_, err := open(ctx, dsn)
		latest := fmt.Sprintf("(%d)", SchemaVersion())
		if err == nil || !strings.Contains(err.Error(), "version 99") || !strings.Contains(err.Error(), latest) {
			t.Errorf("%s(newer schema) = %v, want a refusal naming 99 and %s", name, err, latest)
		}
	}
}

// TestReadOnly reads a migrated database, refuses an empty one and never
// writes.
func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	if _, err := OpenReadOnly(ctx, dsn); err == nil || !strings.Contains(err.Error(), "no faultline") {
		t.Errorf("OpenReadOnly(empty database) = %v, want a refusal", err)
	}
	st, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	ro, err := OpenReadOnly(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := ro.PutCachedAnswer(ctx, storeEntry()); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a write through a read-only store = %v, want a refusal", err)
	}
}

// TestConnectionErrors names the server, the database and what failed in
// one line, and never the password.
func TestConnectionErrors(t *testing.T) {
	ctx := context.Background()
	server, err := url.Parse(pgtest.Server(t))
	if err != nil {
		t.Fatal(err)
	}
	const secret = "s3cret-Pa55"
	wrongPassword := *server
	wrongPassword.User = url.UserPassword(server.User.Username(), secret)
	noDatabase := *server
	noDatabase.Path = "/faultline_no_such_database"
	unreachable := *server
	unreachable.Host = "127.0.0.1:1"
	unreachable.User = url.UserPassword("someone", secret)
	for _, tc := range []struct {
		name string
		dsn  string
		want []string
	}{
		{"wrong password", wrongPassword.String(), []string{server.Hostname(), server.Port(), "password authentication failed"}},
		{"no such database", noDatabase.String(), []string{"faultline_no_such_database", "does not exist"}},
		{"unreachable", unreachable.String(), []string{"127.0.0.1:1", "connection refused"}},
		{"bad URL", "postgres://someone:" + secret + "@host:notaport/db", []string{"PostgreSQL URL", "host"}},
	} {
		_, err := Open(ctx, tc.dsn)
		if err == nil {
			t.Errorf("%s: Open succeeded", tc.name)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
			t.Errorf("%s: %q shows the password or is not one line", tc.name, msg)
		}
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q does not say %q", tc.name, msg, w)
			}
		}
	}
}

func storeEntry() store.CacheEntry { return store.CacheEntry{Key: "k", Model: "m", Content: "c"} }

// TestTransient tells the errors worth retrying from the others.
func TestTransient(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	defer st.Close()
	_, unreachable := Open(ctx, "postgres://someone@127.0.0.1:1/db")
	_, syntax := st.db.ExecContext(ctx, `SELEC 1`)
	_, serialization := st.db.ExecContext(ctx, `DO $$ BEGIN RAISE EXCEPTION USING ERRCODE = '40001'; END $$`)
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"unreachable", unreachable, true},
		{"serialization failure", serialization, true},
		{"syntax error", syntax, false},
		{"no error", nil, false},
	} {
		if got := Transient(tc.err); got != tc.want {
			t.Errorf("Transient(%s: %v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

// TestConcurrentOpen migrates a new database from several processes at
// once (here goroutines, each with its own connections): each change is
// applied once, and every opener ends at the latest version.
func TestConcurrentOpen(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			st, err := Open(ctx, dsn)
			if err == nil {
				st.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	st, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var versions, latest int
	if err := st.db.QueryRowContext(ctx, `SELECT COUNT(*), MAX(version) FROM schema_version`).Scan(&versions, &latest); err != nil {
		t.Fatal(err)
	}
	if want := len(mustSteps(t)); versions != want || latest != SchemaVersion() {
		t.Errorf("schema_version holds %d versions up to %d, want %d up to %d", versions, latest, want, SchemaVersion())
	}
}

func mustSteps(t *testing.T) []step {
	all, err := steps()
	if err != nil {
		t.Fatal(err)
	}
	return all
}
