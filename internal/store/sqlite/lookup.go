package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// lookups is a second, read-only connection to the database for a Batch's
// questions about a file before its traces are written: whether it is
// stored unchanged, and which traces it held. On the write connection they
// wait for whatever holds it, a commit indexing hundreds of traces' steps
// among them, and every file read meanwhile waits with them; here, in WAL
// mode, they read the last commit while the writer goes on. With more
// small files read at once (ingest.Options.Workers), that took a tenth off
// an ingest of 5,000 small runs.
//
// A lookup sees what is committed, not the open transaction: a file written
// earlier in it and met again in the same batch looks changed, and is read
// and stored again, as a changed file is.
type lookups struct {
	path string // the database; "" when it has no second connection

	once sync.Once
	db   *sql.DB
	stmt *sql.Stmt // queryFileLookup
}

// open opens the connection on first use; false when it cannot be opened
// (the caller then asks the write connection).
func (l *lookups) open(ctx context.Context) bool {
	l.once.Do(func() {
		if l.path == "" {
			return
		}
		db, err := openConn(ctx, l.path, "mode=ro&_pragma=busy_timeout(10000)")
		if err != nil {
			return
		}
		stmt, err := db.PrepareContext(ctx, queryFileLookup)
		if err != nil {
			db.Close()
			return
		}
		l.db, l.stmt = db, stmt
	})
	return l.db != nil
}

// close closes the connection, if it was opened.
func (l *lookups) close() error {
	if l.db == nil {
		return nil
	}
	l.stmt.Close()
	return l.db.Close()
}
