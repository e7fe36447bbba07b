// Package store keeps traces, their steps, findings and outcomes in an
// embedded SQLite database (pure Go, no cgo). Re-ingesting a file whose
// content is unchanged is a no-op; a changed file replaces its traces
// (keeping the labels and scores added to them), but a trace is not
// replaced by a version of fewer steps unless the caller allows it (see
// FewerSteps).
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"

	"modernc.org/sqlite" // also registers the "sqlite" driver
)

// Store is an open database.
type Store struct {
	db *sql.DB
	// commits counts the write transactions this Store has committed (see
	// Revision).
	commits atomic.Int64
	// replaced, when set, lets a trace written through File replace a stored
	// one of more steps, and is told of each (see ReplaceFewerSteps).
	replaced func(ingest.FewerSteps)
}

// ReplaceFewerSteps lets traces received through File replace stored traces
// of more steps, which are otherwise refused with a *ingest.FewerSteps error;
// replaced is told of each such replacement.
func (s *Store) ReplaceFewerSteps(replaced func(ingest.FewerSteps)) { s.replaced = replaced }

// Open opens (creating if needed) the database at path and brings its schema
// up to date.
func Open(ctx context.Context, path string) (*Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	// Transactions begin IMMEDIATE, taking the write lock at once: every one
	// of them writes, and a read inside one (such as the stored step count a
	// new trace is checked against) then holds until it commits, whatever
	// another process writes meanwhile. busy_timeout comes first: switching a
	// new database to WAL takes a lock another opener may hold.
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	// One writer at a time is how SQLite works; a single connection also keeps
	// the pragmas above in force for every statement.
	db.SetMaxOpenConns(1)
	if err := connect(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// connect opens the one connection, applying the pragmas. Switching a new
// database to WAL needs an exclusive lock, and SQLite reports a clash with
// another process opening it at the same moment as busy at once rather than
// waiting (the wait could deadlock), so connect waits and tries again, for as
// long as busy_timeout would have.
func connect(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(10 * time.Second)
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, 500*time.Millisecond) {
		err := db.PingContext(ctx)
		var sqliteErr *sqlite.Error
		if err == nil || !errors.As(err, &sqliteErr) || sqliteErr.Code()&0xff != sqliteBusy || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}

// sqliteBusy is SQLITE_BUSY, the primary result code of every busy error.
const sqliteBusy = 5

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// commit commits a write transaction and counts it.
func (s *Store) commit(tx *sql.Tx) error {
	if err := tx.Commit(); err != nil {
		return err
	}
	s.commits.Add(1)
	return nil
}

// Revision names the database's content: it changes once a write through
// this Store commits, or another process commits one (SQLite's
// data_version, which the one connection of this Store sees change only for
// others' commits). A page computed from the database can be kept under it.
func (s *Store) Revision(ctx context.Context) (string, error) {
	var others int64
	if err := s.db.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&others); err != nil {
		return "", fmt.Errorf("reading the data version: %w", err)
	}
	return fmt.Sprintf("%d.%d", s.commits.Load(), others), nil
}

// File implements ingest.Sink. It returns nil when the file's content is
// already stored under the same path; otherwise its traces replace those it
// held before, each stored whole or not at all. A trace with fewer steps
// than the one stored under its id is refused (see FewerSteps) unless
// ReplaceFewerSteps allows it; a file with a refused or failed trace is not
// recorded as ingested, so that it is read, and reported, again.
//
// Writes are committed a few traces at a time (see batchTime), never a
// whole file in one transaction: a large file must not hold SQLite's one
// write lock for as long as it takes to read, while another ingest, the
// receiver or a labeller waits. A file cut short by a crash or an
// interruption leaves the traces it had committed, whole, and is not
// recorded, so the next ingest reads it again and ends where a clean run
// would.
func (s *Store) File(ctx context.Context, f ingest.FileInfo) (ingest.FileSink, error) {
	var hash string
	err := s.db.QueryRowContext(ctx, `SELECT hash FROM files WHERE path = ?`, f.Path).Scan(&hash)
	switch {
	case err == nil && hash == f.Hash:
		return nil, nil
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("looking up file: %w", err)
	}
	// The file's previous traces are removed at Close, those it no longer
	// holds: one it still holds is first compared with its new version, and
	// stays if that version is refused.
	previous, err := fileTraces(ctx, s.db, f.Path)
	if err != nil {
		return nil, err
	}
	return &fileSink{store: s, info: f, previous: previous}, nil
}

// batchTime and batchTraces bound a write transaction of File: it commits
// once it has been open this long or has stored this many traces, so that
// the write lock is held for at most about one trace's write plus
// batchTime, while a file of many small traces still costs few commits.
const (
	batchTime   = 200 * time.Millisecond
	batchTraces = 500
)

// fileTraces returns the ids of the traces stored from a file.
func fileTraces(ctx context.Context, db *sql.DB, file string) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT id FROM traces WHERE file = ?`, file)
	if err != nil {
		return nil, fmt.Errorf("listing previous traces: %w", err)
	}
	defer rows.Close()
	ids := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("listing previous traces: %w", err)
		}
		ids[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing previous traces: %w", err)
	}
	return ids, nil
}

type fileSink struct {
	store  *Store
	info   ingest.FileInfo
	traces int
	// previous holds the ids of the traces the file held before that it has
	// not yet emitted again.
	previous map[string]bool
	// The open write transaction, nil between batches, with its statements,
	// when it began and how many traces it holds.
	tx      *sql.Tx
	w       *writer
	began   time.Time
	batched int
	failed  bool // a trace failed to store: the file is read again next time
	// unavailable is why a transaction could not begin (the database busy
	// beyond its timeout, say): Close then records nothing rather than wait
	// for the lock a second time, and the file is read again next time.
	unavailable error
}

// begin opens a write transaction when none is open.
func (fs *fileSink) begin(ctx context.Context) error {
	if fs.tx != nil {
		return nil
	}
	if fs.unavailable != nil {
		return fs.unavailable
	}
	tx, err := fs.store.db.BeginTx(ctx, nil)
	if err != nil {
		fs.unavailable = fmt.Errorf("starting a transaction: %w", err)
		return fs.unavailable
	}
	w, err := newWriter(ctx, tx)
	if err != nil {
		tx.Rollback()
		return err
	}
	fs.tx, fs.w, fs.began, fs.batched = tx, w, time.Now(), 0
	return nil
}

// commit ends the open transaction, if any.
func (fs *fileSink) commit() error {
	if fs.tx == nil {
		return nil
	}
	fs.w.close()
	tx := fs.tx
	fs.tx, fs.w = nil, nil
	if err := fs.store.commit(tx); err != nil {
		return fmt.Errorf("committing: %w", err)
	}
	return nil
}

// rollback abandons the open transaction, if any.
func (fs *fileSink) rollback() {
	if fs.tx != nil {
		fs.w.close()
		fs.tx.Rollback()
		fs.tx, fs.w = nil, nil
	}
}

func (fs *fileSink) Trace(ctx context.Context, t *trace.Trace) error {
	delete(fs.previous, t.ID)
	if err := fs.begin(ctx); err != nil {
		return err
	}
	fewer, err := fs.w.fewerSteps(ctx, fs.info.Path, t)
	if err != nil {
		return err
	}
	if fewer != nil {
		if fs.store.replaced == nil {
			return fewer
		}
		fs.store.replaced(*fewer)
	}
	// A trace is stored whole or not at all: what a failed insert left is
	// rolled back to the savepoint, and the file's other traces go on.
	if _, err := fs.tx.ExecContext(ctx, `SAVEPOINT trace`); err != nil {
		return fmt.Errorf("trace %s: %w", t.ID, err)
	}
	if err := fs.w.putTrace(ctx, fs.info.Path, t); err != nil {
		fs.failed = true
		if _, rerr := fs.tx.ExecContext(ctx, `ROLLBACK TO trace; RELEASE trace`); rerr != nil {
			fs.rollback()
			return fmt.Errorf("%w (and undoing it: %v)", err, rerr)
		}
		return fmt.Errorf("%w; the trace is not stored", err)
	}
	if _, err := fs.tx.ExecContext(ctx, `RELEASE trace`); err != nil {
		return fmt.Errorf("trace %s: %w", t.ID, err)
	}
	fs.traces++
	fs.batched++
	if fs.batched >= batchTraces || time.Since(fs.began) >= batchTime {
		return fs.commit()
	}
	return nil
}

func (fs *fileSink) Close(ctx context.Context, r ingest.FileResult) error {
	if ctx.Err() != nil || fs.unavailable != nil {
		// Interrupted, or the database out of reach: the traces committed so
		// far stay, whole; the file is not recorded, so it is read again.
		fs.rollback()
		return nil
	}
	if err := fs.begin(ctx); err != nil {
		return err
	}
	for id := range fs.previous {
		if _, err := fs.w.delTrace.ExecContext(ctx, id); err != nil {
			fs.rollback()
			return fmt.Errorf("removing trace %s, no longer in the file: %w", id, err)
		}
	}
	hash := fs.info.Hash
	if r.Err != nil || r.Errors > 0 || fs.failed {
		hash = "" // never matches, so the file is read (and its problems reported) again
	}
	_, err := fs.tx.ExecContext(ctx, `INSERT INTO files (path, hash, format, size, traces, ingested_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (path) DO UPDATE SET hash = excluded.hash, format = excluded.format, size = excluded.size, traces = excluded.traces, ingested_at = excluded.ingested_at`,
		fs.info.Path, hash, fs.info.Format, fs.info.Size, fs.traces, time.Now().UTC().Format(time.RFC3339))
	if err != nil {
		fs.rollback()
		return fmt.Errorf("recording file: %w", err)
	}
	return fs.commit()
}

// writer holds the prepared statements of one transaction.
type writer struct {
	stepCount, delTrace, insTrace, insStep, insFinding, insOutcome *sql.Stmt
	// A replaced trace keeps what was added to it here: set aside before
	// the old version goes, put back once the new one is in.
	keepFindings, keepOutcomes, restore *sql.Stmt
}

func newWriter(ctx context.Context, tx *sql.Tx) (*writer, error) {
	w := &writer{}
	var err error
	prep := func(dst **sql.Stmt, q string) {
		if err == nil {
			*dst, err = tx.PrepareContext(ctx, q)
		}
	}
	prep(&w.stepCount, `SELECT step_count, file FROM traces WHERE id = ?`)
	prep(&w.delTrace, `DELETE FROM traces WHERE id = ?`)
	prep(&w.insTrace, `INSERT INTO traces (id, file, format, source, system, model, task, scenario, trial, started, ended, step_count, usage, meta, diagnosis_source, diagnosis, detected_with)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	prep(&w.insStep, `INSERT INTO steps (trace_id, idx, kind, role, agent, text, tool, args, call_id, pair, exit_code, is_error, time, tokens, type, span_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	prep(&w.insFinding, `INSERT INTO findings (trace_id, source, mode, verdict, detector, steps, quote, confidence, explanation, taxonomy, raw_label)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	prep(&w.insOutcome, `INSERT INTO outcomes (trace_id, source, metric, score, success, detail) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (trace_id, source) DO UPDATE SET metric = excluded.metric, score = excluded.score, success = excluded.success, detail = excluded.detail`)
	if err == nil {
		_, err = tx.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS kept_findings AS SELECT * FROM main.findings WHERE 0;
			CREATE TEMP TABLE IF NOT EXISTS kept_outcomes AS SELECT * FROM main.outcomes WHERE 0`)
	}
	// Kept: findings of a source the new version does not bring itself,
	// whose steps it still has, other than the detectors' and the judge's,
	// which are of the old content (the judge's answers stay in its cache,
	// so judging an unchanged trace again costs no call); outcomes of a
	// source it does not bring, other than the format's own.
	prep(&w.keepFindings, `INSERT INTO temp.kept_findings SELECT * FROM main.findings f WHERE f.trace_id = ?1
		AND f.source <> '`+trace.DetectorSource+`' AND f.source NOT LIKE 'judge:%'
		AND f.source NOT IN (SELECT value FROM json_each(?2))
		AND NOT EXISTS (SELECT 1 FROM json_each(f.steps) WHERE value >= ?3)`)
	prep(&w.keepOutcomes, `INSERT INTO temp.kept_outcomes SELECT * FROM main.outcomes WHERE trace_id = ?1
		AND source <> '`+trace.FormatOutcomeSource+`' AND source NOT IN (SELECT value FROM json_each(?2))`)
	prep(&w.restore, `INSERT INTO main.findings SELECT * FROM temp.kept_findings;
		INSERT INTO main.outcomes SELECT * FROM temp.kept_outcomes;
		DELETE FROM temp.kept_findings; DELETE FROM temp.kept_outcomes`)
	if err != nil {
		w.close()
		return nil, fmt.Errorf("preparing statements: %w", err)
	}
	return w, nil
}

func (w *writer) close() {
	for _, st := range []*sql.Stmt{w.stepCount, w.delTrace, w.insTrace, w.insStep, w.insFinding, w.insOutcome,
		w.keepFindings, w.keepOutcomes, w.restore} {
		if st != nil {
			st.Close()
		}
	}
}

// fewerSteps says how t, arriving from file, falls short of the trace stored
// under its id: nil when none is stored or t has as many steps or more. It
// reads the stored step count, not the steps.
func (w *writer) fewerSteps(ctx context.Context, file string, t *trace.Trace) (*ingest.FewerSteps, error) {
	var stored int
	var from string
	err := w.stepCount.QueryRowContext(ctx, t.ID).Scan(&stored, &from)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("trace %s: reading its stored step count: %w", t.ID, err)
	case len(t.Steps) >= stored:
		return nil, nil
	}
	return &ingest.FewerSteps{ID: t.ID, Stored: stored, StoredFrom: from, Incoming: len(t.Steps), File: file}, nil
}

// putTrace stores a trace with its steps, bundled findings and outcomes,
// replacing any earlier trace with the same id. What was added to the
// earlier one in faultline (labels saved in the web UI or imported, scores)
// stays with the new one: reading a file again,
// after it changed or after an interrupted ingest, or merging late spans
// into a received trace, loses none of it. Of those, a finding pointing at
// a step the new version lacks goes.
func (w *writer) putTrace(ctx context.Context, file string, t *trace.Trace) error {
	var findingSources, outcomeSources []string
	for _, f := range t.Findings {
		findingSources = append(findingSources, f.Source)
	}
	for _, o := range t.Outcomes {
		outcomeSources = append(outcomeSources, o.Source)
	}
	for _, keep := range []struct {
		st   *sql.Stmt
		args []any
	}{
		{w.keepFindings, []any{t.ID, jsonText(findingSources), len(t.Steps)}},
		{w.keepOutcomes, []any{t.ID, jsonText(outcomeSources)}},
	} {
		if _, err := keep.st.ExecContext(ctx, keep.args...); err != nil {
			return fmt.Errorf("trace %s: setting aside what it holds: %w", t.ID, err)
		}
	}
	if _, err := w.delTrace.ExecContext(ctx, t.ID); err != nil {
		return fmt.Errorf("trace %s: %w", t.ID, err)
	}
	diagSource, diagBody := "", sql.NullString{}
	if t.Diagnosis != nil {
		diagSource, diagBody = t.Diagnosis.Source, sql.NullString{String: t.Diagnosis.Body, Valid: true}
	}
	_, err := w.insTrace.ExecContext(ctx, t.ID, file, t.Format, t.Source, t.System, t.Model, t.Task, t.Scenario, t.Trial,
		timeText(t.Started), timeText(t.Ended), len(t.Steps), jsonText(t.Usage), jsonText(t.Meta), diagSource, diagBody, t.DetectedWith)
	if err != nil {
		return fmt.Errorf("trace %s: %w", t.ID, err)
	}
	for i := range t.Steps {
		st := &t.Steps[i]
		_, err := w.insStep.ExecContext(ctx, t.ID, st.Index, string(st.Kind), st.Role, st.Agent, st.Text, st.Tool, st.Args, st.CallID,
			nullInt(st.Pair), nullInt(st.ExitCode), st.IsError, timeText(st.Time), st.Tokens, st.Type, st.SpanID)
		if err != nil {
			return fmt.Errorf("trace %s step %d: %w", t.ID, i, err)
		}
	}
	// Put back before the new findings take fresh ids: the kept ones keep
	// theirs.
	if _, err := w.restore.ExecContext(ctx); err != nil {
		return fmt.Errorf("trace %s: putting back what it held: %w", t.ID, err)
	}
	if err := w.putFindings(ctx, t.ID, t.Findings); err != nil {
		return err
	}
	for _, o := range t.Outcomes {
		if err := w.putOutcome(ctx, t.ID, o); err != nil {
			return err
		}
	}
	return nil
}

func (w *writer) putFindings(ctx context.Context, traceID string, findings []trace.Finding) error {
	for _, f := range findings {
		steps := f.Steps
		if steps == nil {
			steps = []int{}
		}
		_, err := w.insFinding.ExecContext(ctx, traceID, f.Source, f.Mode, string(f.Verdict), f.Detector, jsonText(steps), f.Quote,
			f.Confidence, f.Explanation, f.Taxonomy, f.RawLabel)
		if err != nil {
			return fmt.Errorf("trace %s finding %s: %w", traceID, f.Mode, err)
		}
	}
	return nil
}

func (w *writer) putOutcome(ctx context.Context, traceID string, o trace.Outcome) error {
	var success sql.NullBool
	if o.Success != nil {
		success = sql.NullBool{Bool: *o.Success, Valid: true}
	}
	var score sql.NullFloat64
	if o.Score != nil {
		score = sql.NullFloat64{Float64: *o.Score, Valid: true}
	}
	if _, err := w.insOutcome.ExecContext(ctx, traceID, o.Source, o.Metric, score, success, o.Detail); err != nil {
		return fmt.Errorf("trace %s outcome %s: %w", traceID, o.Source, err)
	}
	return nil
}

// ReplaceFindings swaps every finding of one source on a trace for the given
// ones, and records which detector set produced them when detectedWith is set.
func (s *Store) ReplaceFindings(ctx context.Context, traceID, source string, findings []trace.Finding, detectedWith string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM findings WHERE trace_id = ? AND source = ?`, traceID, source); err != nil {
		return fmt.Errorf("trace %s: %w", traceID, err)
	}
	w, err := newWriter(ctx, tx)
	if err != nil {
		return err
	}
	defer w.close()
	if err := w.putFindings(ctx, traceID, findings); err != nil {
		return err
	}
	if detectedWith != "" {
		if _, err := tx.ExecContext(ctx, `UPDATE traces SET detected_with = ? WHERE id = ?`, detectedWith, traceID); err != nil {
			return fmt.Errorf("trace %s: %w", traceID, err)
		}
	}
	return s.commit(tx)
}

// PutOutcome stores (or replaces) one source's outcome for a trace.
func (s *Store) PutOutcome(ctx context.Context, traceID string, o trace.Outcome) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	w, err := newWriter(ctx, tx)
	if err != nil {
		return err
	}
	defer w.close()
	if err := w.putOutcome(ctx, traceID, o); err != nil {
		return err
	}
	return s.commit(tx)
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func parseTimeText(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return "{}"
	}
	return string(b)
}

func nullInt(p *int) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: int64(*p), Valid: true}
}

// likeEscape escapes LIKE wildcards so a user's text matches literally.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
