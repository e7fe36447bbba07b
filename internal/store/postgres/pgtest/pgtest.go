// Package pgtest gives tests a PostgreSQL database of their own: the
// server is the one FAULTLINE_TEST_POSTGRES names (a connection URL), and
// each test gets a new database, dropped when it ends. Without the variable
// the test is skipped, unless CI=true, where a missing server is a failure:
// a suite that silently skips in CI proves nothing.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
)

// EnvVar names the server the tests use.
const EnvVar = "FAULTLINE_TEST_POSTGRES"

// Server returns the server's URL, skipping the test (or failing it under
// CI=true) when there is none.
func Server(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(EnvVar)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: the PostgreSQL tests cannot run (CI=true requires them)", EnvVar)
		}
		t.Skipf("%s is not set: no PostgreSQL server to test against", EnvVar)
	}
	return dsn
}

// Database creates an empty database on the server for this test and
// returns its URL; the database is dropped when the test ends.
func Database(t testing.TB) string {
	t.Helper()
	server := Server(t)
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("%s: %v", EnvVar, err)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "faultline_test_" + strings.ToLower(sanitize(t.Name())) + "_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", server)
	if err != nil {
		t.Fatalf("%s: %v", EnvVar, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		admin.Close()
		t.Fatalf("creating a test database on %s: %v", u.Redacted(), err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// FORCE: a connection the test left open must not keep it.
		if _, err := admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			t.Errorf("dropping test database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

// sanitize keeps the letters and digits of a test's name, shortened, so
// that the database's name says which test made it and needs no quoting.
func sanitize(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 30 {
			break
		}
	}
	return b.String()
}
