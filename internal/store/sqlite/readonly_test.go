package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/store"
)

// A database opened read-only answers reads, refuses writes and is left
// byte for byte as it was.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "f.db")
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	ingestFile(t, st, "/f", "h", sample("a", "m", nil))
	st.Close()
	before := fileHash(t, path)

	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ro.List(ctx, store.Filter{}); err != nil || len(got) != 1 {
		t.Errorf("list: %v %v", got, err)
	}
	if err := ro.ReplaceFindings(ctx, "a", "human:x", nil, ""); err == nil || !strings.Contains(err.Error(), "readonly") {
		t.Errorf("a write went through, or failed otherwise: %v", err)
	}
	ro.Close()
	if fileHash(t, path) != before {
		t.Error("the database changed while open read-only")
	}
}

func TestOpenReadOnlyRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	older := filepath.Join(dir, "older.db")
	st, err := Open(ctx, older)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.db.ExecContext(ctx, `DELETE FROM schema_version WHERE version = (SELECT MAX(version) FROM schema_version)`); err != nil {
		t.Fatal(err)
	}
	st.Close()
	foreign := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", "file:"+foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, tc := range []struct{ name, path, want string }{
		{"missing, in a missing directory", filepath.Join(dir, "typo", "x.db"), "no database at"},
		{"a directory", dir, "is a directory"},
		{"another program's database", foreign, "not a faultline database"},
		{"an older schema", older, "run a command that writes, such as faultline ingest, once to upgrade it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := OpenReadOnly(ctx, tc.path)
			if err == nil {
				st.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want %q", err, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "typo")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("reading created the directory: %v", err)
	}
}

func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}
