package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestTransientStoreError holds which store errors the receiver retries
// with backoff rather than counting the trace lost, on either backend.
func TestTransientStoreError(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"a deadline", fmt.Errorf("storing: %w", context.DeadlineExceeded), true},
		{"PostgreSQL restarting", &pgconn.PgError{Code: "57P03"}, true},
		{"PostgreSQL out of connections", fmt.Errorf("x: %w", &pgconn.PgError{Code: "53300"}), true},
		{"a serialization conflict", &pgconn.PgError{Code: "40001"}, true},
		{"a constraint PostgreSQL refuses", &pgconn.PgError{Code: "23505"}, false},
		{"anything else", errors.New("bad trace"), false},
	} {
		if got := transientStoreError(tc.err); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
