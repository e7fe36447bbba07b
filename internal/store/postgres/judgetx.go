package postgres

import (
	"context"
	"database/sql"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// What a job queue working on the same database needs: its connections,
// and the judge's write in a transaction of its own, so that a verdict and
// the completion of the job that produced it commit together.

// DB returns the store's connection pool, for a job queue that keeps its
// jobs in the same database and completes them in the store's
// transactions. Closing the store closes it.
func (s *Store) DB() *sql.DB { return s.db }

// PutJudgementTx is PutJudgement in the caller's transaction tx: nothing
// is written until tx commits, and nothing is if it rolls back.
func (s *Store) PutJudgementTx(ctx context.Context, tx *sql.Tx, r store.JudgeRecord, findings []trace.Finding) error {
	return putJudgement(ctx, tx, r, findings)
}
