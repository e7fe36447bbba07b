package postgres

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestMigrationsMatchSQLite holds the two dialects to the same versions:
// each SQLite migration has its PostgreSQL counterpart of the same number
// (empty where the change concerned SQLite alone), so that a schema
// version means the same on both.
func TestMigrationsMatchSQLite(t *testing.T) {
	entries, err := os.ReadDir("../sqlite/migrations")
	if err != nil {
		t.Fatal(err)
	}
	var sqlite []int
	for _, e := range entries {
		prefix, _, _ := strings.Cut(e.Name(), "_")
		if v, err := strconv.Atoi(prefix); err == nil && strings.HasSuffix(e.Name(), ".sql") {
			sqlite = append(sqlite, v)
		}
	}
	var ours []int
	for _, s := range mustSteps(t) {
		ours = append(ours, s.version)
	}
	slices.Sort(sqlite)
	if !slices.Equal(ours, sqlite) {
		t.Errorf("PostgreSQL migrations %v, SQLite's %v: add the counterpart of each", ours, sqlite)
	}
}
