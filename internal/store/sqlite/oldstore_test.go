package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
)

// openOld makes a store of the given schema version, as a faultline of
// that version made it, holding what the statements write, and opens it
// with this one, which upgrades it.
func openOld(t *testing.T, version int, statements ...string) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	list, err := migrationList()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range list {
		if m.version > version {
			break
		}
		if _, err := db.Exec(m.body); err != nil {
			t.Fatal(m.name, err)
		}
	}
	setup := append([]string{`CREATE TABLE schema_version (version INTEGER NOT NULL)`,
		fmt.Sprintf(`INSERT INTO schema_version VALUES (%d)`, version)}, statements...)
	for _, q := range setup {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	db.Close()
	st, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
