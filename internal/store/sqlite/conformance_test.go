package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/faultline/faultline/internal/store/storetest"
)

// TestConformance runs the store's conformance suite on SQLite.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store {
		st, err := Open(context.Background(), filepath.Join(t.TempDir(), "faultline.db"))
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}
