package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/faultline/faultline/internal/store/storetest"
)

func TestPickSteps(t *testing.T) {
	storetest.TestPickSteps(t, func(t *testing.T) storetest.Store {
		st, err := Open(context.Background(), filepath.Join(t.TempDir(), "faultline.db"))
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}
