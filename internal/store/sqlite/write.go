package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

// batchTime and batchTraces bound a write transaction: it commits once it
// has been open this long or has stored this many traces, so that the
// write lock is held for at most about one trace's write plus batchTime,
// while many small traces still cost few commits.
const (
	batchTime   = 200 * time.Millisecond
	batchTraces = 500
)

// maxSteps is one more than the highest step index a trace may have: a
// step's row id is its trace's key << stepBits | its index.
const maxSteps = 1 << stepBits

// A Batch writes the traces of the files given to it in shared
// transactions, each committed once it is batchTime old or holds
// batchTraces traces, whether they come from one file or many: a file of
// one small trace then costs a share of a commit, not one. What a
// transaction holds is lost whole by a crash or a kill, files included, so
// that the next ingest reads those files again and completes them; nothing
// committed is ever half a trace or a file recorded without its traces.
//
// A transaction open with nothing more to write is committed after
// batchTime all the same, so that SQLite's write lock is not held while a
// file is read. Close commits what is left. A Batch is safe for use by
// one goroutine at a time, besides the committing in the background.
type Batch struct {
	s *Store
	// perFile commits at the end of every file (Store.File).
	perFile bool

	mu sync.Mutex
	// The open transaction, nil between, with when it began and how many
	// traces it holds.
	w      *writer
	began  time.Time
	traces int
	timer  *time.Timer
	// unindexed holds the keys of the traces written in the open
	// transaction, whose steps the search index is yet to take (see
	// indexSteps).
	unindexed map[int64]bool
	// err is why a commit in the background failed: what it held is lost,
	// and the next call says so.
	err error
	// txn numbers the transactions from 1, the open one's last; lost holds
	// those rolled back or failing to commit. Files are written from
	// several goroutines at once (ingest.Options.Workers), so a transaction
	// one file's failure undoes may hold another's traces: that file then
	// is not recorded as read (see fileSink.Close).
	txn  int
	lost map[int]bool
}

// Batch starts writing in shared transactions (see Batch). Until it is
// closed it may hold the Store's one connection for up to batchTime at a
// time, so a caller that writes through it reads through it too (File, as
// ingest does) rather than through the Store.
func (s *Store) Batch() *Batch { return &Batch{s: s} }

// File implements ingest.Sink (see Store.File).
//
// It does not wait for the batch's writer (see lookups): a commit that
// failed in the background is told by the file's first write, or Close.
func (b *Batch) File(ctx context.Context, f ingest.FileInfo) (ingest.FileSink, error) {
	stored, err := b.lookup(ctx, f.Path)
	if err != nil {
		return nil, err
	}
	if stored.recorded && stored.hash == f.Hash {
		return nil, nil
	}
	// The file's previous traces are removed at Close, those it no longer
	// holds: one it still holds is first compared with its new version, and
	// stays if that version is refused.
	return &fileSink{b: b, info: f, previous: stored.traces}, nil
}

// Close commits what the open transaction holds, or rolls it back when ctx
// is done (an interrupted ingest keeps what it committed). It returns why
// a commit failed, in the background or now.
func (b *Batch) Close(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ctx.Err() != nil {
		b.rollback()
		return nil
	}
	if err := b.commit(ctx); err != nil {
		return err
	}
	return b.err
}

// storedFile is what the store holds of a file: whether it is recorded,
// with which hash, and the ids of the traces stored from it.
type storedFile struct {
	recorded bool
	hash     string
	traces   map[string]bool
}

// lookup reads what the store holds of the file at path, by
// queryFileLookup, on the Store's read connection (see lookups) when the
// batch is a long one and it opens, else in the open transaction, if any
// (the Store's connection is its), or on the database. ctx is checked
// first but not watched: under a context that can be cancelled the driver
// and database/sql each watch it from a goroutine of their own for every
// statement.
func (b *Batch) lookup(ctx context.Context, path string) (storedFile, error) {
	if err := ctx.Err(); err != nil {
		return storedFile{}, err
	}
	ctx = context.WithoutCancel(ctx)
	if !b.perFile && b.s.lookups.open(ctx) {
		return lookupFile(ctx, b.s.lookups.stmt, path)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.s.shared[queryFileLookup]
	if b.w != nil {
		var err error
		if st, err = b.w.stmt(ctx, queryFileLookup); err != nil {
			return storedFile{}, fmt.Errorf("looking up file: %w", err)
		}
	}
	return lookupFile(ctx, st, path)
}

// lookupFile runs queryFileLookup, prepared as st: one statement for the
// file's record and its traces rather than one for each, as every file of
// a walk of many small ones is looked up (0.54 → 0.35 s of CPU per 5,000
// runs, in one profile each).
func lookupFile(ctx context.Context, st *sql.Stmt, path string) (storedFile, error) {
	rows, err := st.QueryContext(ctx, path)
	if err != nil {
		return storedFile{}, fmt.Errorf("looking up file: %w", err)
	}
	defer rows.Close()
	f := storedFile{traces: map[string]bool{}}
	for rows.Next() {
		var isRecord bool
		var value string
		if err := rows.Scan(&isRecord, &value); err != nil {
			return storedFile{}, fmt.Errorf("looking up file: %w", err)
		}
		if isRecord {
			f.recorded, f.hash = true, value
		} else {
			f.traces[value] = true
		}
	}
	if err := rows.Err(); err != nil {
		return storedFile{}, fmt.Errorf("looking up file: %w", err)
	}
	return f, nil
}

// begin opens a write transaction when none is open. The transaction ends
// with ctx: cancelled, it is rolled back.
func (b *Batch) begin(ctx context.Context) error {
	if b.w != nil {
		return nil
	}
	tx, err := b.s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("starting a transaction: %w", err)
	}
	b.w, b.began, b.traces = b.s.newWriter(tx), time.Now(), 0
	b.txn++
	b.unindexed = map[int64]bool{}
	b.timer = time.AfterFunc(batchTime, b.expire)
	return nil
}

// expire commits the open transaction once it is batchTime old, when
// nothing is being written meanwhile (a file being read, say).
func (b *Batch) expire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.w == nil {
		return
	}
	if wait := batchTime - time.Since(b.began); wait > 0 {
		b.timer.Reset(wait)
		return
	}
	if err := b.commit(context.Background()); err != nil && b.err == nil {
		b.err = err
	}
}

// due commits the open transaction if it is full or old enough.
func (b *Batch) due(ctx context.Context) error {
	if b.w != nil && (b.traces >= batchTraces || time.Since(b.began) >= batchTime) {
		return b.commit(ctx)
	}
	return nil
}

// commit indexes the steps the open transaction wrote and commits it.
func (b *Batch) commit(ctx context.Context) error {
	if b.w == nil {
		return nil
	}
	w, traces := b.w, b.traces
	err := b.indexSteps(ctx)
	b.end()
	if err == nil {
		err = b.s.commit(w.tx)
	}
	if err != nil {
		w.tx.Rollback()
		b.lose()
		return fmt.Errorf("committing %d traces: %w; they are not stored", traces, err)
	}
	return nil
}

// rollback abandons the open transaction, if any.
func (b *Batch) rollback() {
	if w := b.w; w != nil {
		b.end()
		w.tx.Rollback()
		b.lose()
	}
}

// lose records that the last transaction stored nothing.
func (b *Batch) lose() {
	if b.lost == nil {
		b.lost = map[int]bool{}
	}
	b.lost[b.txn] = true
}

// end forgets the open transaction, which the caller commits or rolls back.
func (b *Batch) end() {
	b.w.close()
	b.w = nil
	b.timer.Stop()
	b.unindexed = nil
}

// indexSteps adds the steps of the traces written in the open transaction
// to the search index, in one statement. FTS5 writes what it holds in
// memory to a new segment at the start of every statement and savepoint
// that follows a write to it, so the steps are indexed once the batch's
// traces are in, each in its savepoint, and then all at once: one
// segment per megabyte of text rather than one per trace (or per step).
// They are read back from step_rows, where the text is, so that none of
// it is held meanwhile. A trace replaced since it was written has no steps
// left under its old key, and one stored again under the same key is
// indexed once.
func (b *Batch) indexSteps(ctx context.Context) error {
	if len(b.unindexed) == 0 {
		return nil
	}
	keys := make([]string, 0, len(b.unindexed))
	for k := range b.unindexed {
		keys = append(keys, strconv.FormatInt(k, 10))
	}
	slices.Sort(keys)
	_, err := b.w.exec(ctx, `INSERT INTO steps_fts (rowid, text, args, tool)
		SELECT s.rowid, s.text, s.args, s.tool FROM json_each(?) k
		JOIN step_rows s ON s.rowid BETWEEN k.value << 24 AND (k.value << 24) | 16777215`, "["+strings.Join(keys, ",")+"]")
	if err != nil {
		return fmt.Errorf("indexing steps for search: %w", err)
	}
	clear(b.unindexed)
	return nil
}

type fileSink struct {
	b      *Batch
	info   ingest.FileInfo
	traces int
	// previous holds the ids of the traces the file held before that it has
	// not yet emitted again.
	previous map[string]bool
	failed   bool // a trace failed to store: the file is read again next time
	// txns are the transactions the file's traces were written in.
	txns []int
	// unavailable is why a transaction could not begin (the database busy
	// beyond its timeout, say): Close then records nothing rather than wait
	// for the lock a second time, and the file is read again next time.
	unavailable error
}

// begin opens the batch's transaction for the file, unless one could not
// be opened for it before.
func (fs *fileSink) begin(ctx context.Context) error {
	if fs.unavailable != nil {
		return fs.unavailable
	}
	if err := fs.b.begin(ctx); err != nil {
		fs.unavailable = err
		return err
	}
	return nil
}

func (fs *fileSink) Trace(ctx context.Context, t *trace.Trace) error {
	b := fs.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return b.err
	}
	delete(fs.previous, t.ID)
	if err := fs.begin(ctx); err != nil {
		return err
	}
	stored, from, err := b.w.storedSteps(ctx, t.ID)
	if err != nil {
		return err
	}
	if stored > len(t.Steps) {
		fewer := &ingest.FewerSteps{ID: t.ID, Stored: stored, StoredFrom: from, Incoming: len(t.Steps), File: fs.info.Path}
		if b.s.replaced == nil {
			return fewer
		}
		b.s.replaced(*fewer)
	}
	// A trace is stored whole or not at all, and the file's other traces go
	// on. One replacing a stored version is written in a savepoint, rolled
	// back to when a write fails; what a new one, nearly every one, left is
	// deleted instead: a savepoint copies each page the trace's writes touch
	// first, an eighth of a small trace's write.
	replacing := stored >= 0
	if replacing {
		if _, err := b.w.exec(ctx, querySavepoint); err != nil {
			return fmt.Errorf("trace %s: %w", t.ID, err)
		}
	}
	key, err := b.w.putTrace(ctx, fs.info.Path, t, replacing)
	if err != nil {
		fs.failed = true
		var rerr error
		if replacing {
			_, rerr = b.w.exec(ctx, `ROLLBACK TO trace; RELEASE trace`)
		} else {
			_, rerr = b.w.exec(ctx, queryDeleteTrace, t.ID)
		}
		if rerr != nil {
			b.rollback()
			return fmt.Errorf("%w (and undoing it: %v)", err, rerr)
		}
		return fmt.Errorf("%w; the trace is not stored", err)
	}
	if replacing {
		if _, err := b.w.exec(ctx, queryRelease); err != nil {
			return fmt.Errorf("trace %s: %w", t.ID, err)
		}
	}
	b.unindexed[key] = true
	if n := len(fs.txns); n == 0 || fs.txns[n-1] != b.txn {
		fs.txns = append(fs.txns, b.txn)
	}
	fs.traces++
	b.traces++
	return b.due(ctx)
}

func (fs *fileSink) Close(ctx context.Context, r ingest.FileResult) error {
	b := fs.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if ctx.Err() != nil {
		// Interrupted: the traces committed so far stay, whole; the file is
		// not recorded, so it is read again.
		b.rollback()
		return nil
	}
	if fs.unavailable != nil {
		// The database out of reach: the file is not recorded, so it is
		// read again. No transaction of its was open when one could not
		// begin, so there is none of its to undo.
		return nil
	}
	if b.err != nil {
		return b.err
	}
	if err := fs.begin(ctx); err != nil {
		return err
	}
	for id := range fs.previous {
		if _, err := b.w.exec(ctx, queryDeleteTrace, id); err != nil {
			b.rollback()
			return fmt.Errorf("removing trace %s, no longer in the file: %w", id, err)
		}
	}
	hash := fs.info.Hash
	lost := slices.ContainsFunc(fs.txns, func(n int) bool { return b.lost[n] })
	if r.Err != nil || r.Errors > 0 || fs.failed || lost {
		hash = "" // never matches, so the file is read (and its problems reported) again
	}
	_, err := b.w.exec(ctx, queryRecordFile,
		fs.info.Path, hash, fs.info.Format, fs.info.Size, fs.traces, time.Now().UTC().Format(time.RFC3339))
	if err != nil {
		b.rollback()
		return fmt.Errorf("recording file: %w", err)
	}
	if b.perFile {
		return b.commit(ctx)
	}
	return b.due(ctx)
}

// The statements of every trace write. Open prepares them once for the
// database and a transaction takes them from there (sql.Tx.StmtContext
// reuses a statement already prepared on its connection): preparing them
// anew in every transaction was a sixth of the receiver's time, where each
// trace is a transaction of its own.
const (
	queryStoredSteps = `SELECT step_count, file FROM traces WHERE id = ?`
	queryFileLookup  = `SELECT 1, hash FROM files WHERE path = ?1 UNION ALL SELECT 0, id FROM traces WHERE file = ?1`
	queryTraceKey    = `SELECT key FROM trace_keys WHERE trace_id = ?`
	querySavepoint   = `SAVEPOINT trace`
	queryRelease     = `RELEASE trace`
	queryDeleteTrace = `DELETE FROM traces WHERE id = ?`
	queryInsertTrace = `INSERT INTO traces (id, file, format, source, system, model, task, scenario, trial, started, ended, step_count, usage, meta, diagnosis_source, diagnosis, detected_with)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	queryInsertStep = `INSERT INTO step_rows (rowid, kind, role, agent, tool, call_id, pair, exit_code, is_error, time, tokens, type, span_id, text, args)
			VALUES (?, ?, ifnull(?, ''), ifnull(?, ''), ifnull(?, ''), ifnull(?, ''), ?, ?, ?, ifnull(?, ''), ?, ifnull(?, ''), ifnull(?, ''), ifnull(?, ''), ifnull(?, ''))`
	queryInsertFinding = `INSERT INTO findings (trace_id, source, mode, verdict, detector, steps, quote, confidence, explanation, taxonomy, raw_label)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	queryInsertOutcome = `INSERT INTO outcomes (trace_id, source, metric, score, success, detail) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (trace_id, source) DO UPDATE SET metric = excluded.metric, score = excluded.score, success = excluded.success, detail = excluded.detail`
	queryRecordFile = `INSERT INTO files (path, hash, format, size, traces, ingested_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (path) DO UPDATE SET hash = excluded.hash, format = excluded.format, size = excluded.size, traces = excluded.traces, ingested_at = excluded.ingested_at`
)

var sharedQueries = []string{queryStoredSteps, queryFileLookup, queryTraceKey, querySavepoint, queryRelease, queryDeleteTrace,
	queryInsertTrace, queryInsertStep, queryInsertFinding, queryInsertOutcome, queryRecordFile}

// prepareShared prepares sharedQueries for db.
func prepareShared(ctx context.Context, db *sql.DB) (map[string]*sql.Stmt, error) {
	shared := map[string]*sql.Stmt{}
	for _, q := range sharedQueries {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			closeAll(shared)
			return nil, fmt.Errorf("preparing %q: %w", q, err)
		}
		shared[q] = st
	}
	return shared, nil
}

func closeAll(stmts map[string]*sql.Stmt) {
	for _, st := range stmts {
		st.Close()
	}
}

// writer writes through one transaction, preparing each statement the
// first time the transaction runs it, or taking it from shared.
type writer struct {
	tx     *sql.Tx
	shared map[string]*sql.Stmt
	stmts  map[string]*sql.Stmt
	// kept says the temporary tables that a replaced trace's additions wait
	// in exist.
	kept bool
}

func (s *Store) newWriter(tx *sql.Tx) *writer {
	return &writer{tx: tx, shared: s.shared, stmts: map[string]*sql.Stmt{}}
}

func (w *writer) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st := w.stmts[query]; st != nil {
		return st, nil
	}
	var st *sql.Stmt
	var err error
	if shared := w.shared[query]; shared != nil {
		st = w.tx.StmtContext(ctx, shared)
	} else if st, err = w.tx.PrepareContext(ctx, query); err != nil {
		return nil, err
	}
	w.stmts[query] = st
	return st, nil
}

// exec runs a statement once ctx is checked, but not under it, and so does
// queryRow: under a context that can be cancelled, the driver and
// database/sql each watch it from a goroutine of their own for every
// statement, which was a tenth of the time a small trace's write took. A
// write is then cancelled between its statements, each of them short.
func (w *writer) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx = context.WithoutCancel(ctx)
	st, err := w.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (w *writer) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if ctx.Err() == nil {
		ctx = context.WithoutCancel(ctx)
	}
	st, err := w.stmt(ctx, query)
	if err != nil {
		// A statement that does not prepare fails its scan the same way.
		return w.tx.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

func (w *writer) close() { closeAll(w.stmts) }

// storedSteps returns how many steps the trace stored under id has, and the
// file it came from; -1 when none is stored. It reads the stored step
// count, not the steps.
func (w *writer) storedSteps(ctx context.Context, id string) (int, string, error) {
	var stored int
	var from string
	err := w.queryRow(ctx, queryStoredSteps, id).Scan(&stored, &from)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return -1, "", nil
	case err != nil:
		return 0, "", fmt.Errorf("trace %s: reading its stored step count: %w", id, err)
	}
	return stored, from, nil
}

// putTrace stores a trace with its steps, bundled findings and outcomes,
// replacing the trace stored under its id, if any (replacing), and returns
// the trace's key. What was added to the earlier one in faultline (labels
// saved in the web UI or imported, scores) stays with the new one: reading
// a file again, after it changed or after an interrupted ingest, or merging
// late spans into a received trace, loses none of it. Of those, a finding
// pointing at a step the new version lacks goes.
func (w *writer) putTrace(ctx context.Context, file string, t *trace.Trace, replacing bool) (int64, error) {
	if replacing {
		if err := w.setAside(ctx, t); err != nil {
			return 0, err
		}
		if _, err := w.exec(ctx, queryDeleteTrace, t.ID); err != nil {
			return 0, fmt.Errorf("trace %s: %w", t.ID, err)
		}
	}
	diagSource, diagBody := "", sql.NullString{}
	if t.Diagnosis != nil {
		diagSource, diagBody = t.Diagnosis.Source, sql.NullString{String: t.Diagnosis.Body, Valid: true}
	}
	_, err := w.exec(ctx, queryInsertTrace,
		t.ID, file, t.Format, t.Source, t.System, t.Model, t.Task, t.Scenario, t.Trial,
		timeText(t.Started), timeText(t.Ended), len(t.Steps), jsonText(t.Usage), jsonText(t.Meta), diagSource, diagBody, t.DetectedWith)
	if err != nil {
		return 0, fmt.Errorf("trace %s: %w", t.ID, err)
	}
	// The key the insert gave the trace (migration 0004's trigger).
	var key int64
	if err := w.queryRow(ctx, queryTraceKey, t.ID).Scan(&key); err != nil {
		return 0, fmt.Errorf("trace %s: reading its key: %w", t.ID, err)
	}
	for i := range t.Steps {
		st := &t.Steps[i]
		if st.Index < 0 || st.Index >= maxSteps {
			return 0, fmt.Errorf("trace %s: step index %d is out of range (a trace has at most %d steps)", t.ID, st.Index, maxSteps)
		}
		_, err := w.exec(ctx, queryInsertStep,
			key<<stepBits|int64(st.Index), string(st.Kind), orNull(st.Role), orNull(st.Agent), orNull(st.Tool), orNull(st.CallID),
			nullInt(st.Pair), nullInt(st.ExitCode), st.IsError, orNull(timeText(st.Time)), st.Tokens, orNull(st.Type), orNull(st.SpanID), orNull(st.Text), orNull(st.Args))
		if err != nil {
			return 0, fmt.Errorf("trace %s step %d: %w", t.ID, i, err)
		}
	}
	// Put back before the new findings take fresh ids: the kept ones keep
	// theirs.
	if replacing {
		if _, err := w.exec(ctx, `INSERT INTO main.findings SELECT * FROM temp.kept_findings;
			INSERT INTO main.outcomes SELECT * FROM temp.kept_outcomes;
			DELETE FROM temp.kept_findings; DELETE FROM temp.kept_outcomes`); err != nil {
			return 0, fmt.Errorf("trace %s: putting back what it held: %w", t.ID, err)
		}
	}
	if err := w.putFindings(ctx, t.ID, t.Findings); err != nil {
		return 0, err
	}
	for _, o := range t.Outcomes {
		if err := w.putOutcome(ctx, t.ID, o); err != nil {
			return 0, err
		}
	}
	return key, nil
}

// setAside copies what was added to the stored trace under t's id into
// temporary tables, for putTrace to put back: findings of a source t does
// not bring itself, whose steps it still has, other than the detectors'
// and the judge's, which are of the old content (the judge's answers stay
// in its cache, so judging an unchanged trace again costs no call);
// outcomes of a source it does not bring, other than the format's own.
func (w *writer) setAside(ctx context.Context, t *trace.Trace) error {
	if !w.kept {
		if _, err := w.tx.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS kept_findings AS SELECT * FROM main.findings WHERE 0;
			CREATE TEMP TABLE IF NOT EXISTS kept_outcomes AS SELECT * FROM main.outcomes WHERE 0`); err != nil {
			return fmt.Errorf("trace %s: setting aside what it holds: %w", t.ID, err)
		}
		w.kept = true
	}
	var findingSources, outcomeSources []string
	for _, f := range t.Findings {
		findingSources = append(findingSources, f.Source)
	}
	for _, o := range t.Outcomes {
		outcomeSources = append(outcomeSources, o.Source)
	}
	for _, keep := range []struct {
		query string
		args  []any
	}{
		{`INSERT INTO temp.kept_findings SELECT * FROM main.findings f WHERE f.trace_id = ?1
			AND f.source <> '` + trace.DetectorSource + `' AND f.source NOT LIKE 'judge:%'
			AND f.source NOT IN (SELECT value FROM json_each(?2))
			AND NOT EXISTS (SELECT 1 FROM json_each(f.steps) WHERE value >= ?3)`,
			[]any{t.ID, jsonText(findingSources), len(t.Steps)}},
		{`INSERT INTO temp.kept_outcomes SELECT * FROM main.outcomes WHERE trace_id = ?1
			AND source <> '` + trace.FormatOutcomeSource + `' AND source NOT IN (SELECT value FROM json_each(?2))`,
			[]any{t.ID, jsonText(outcomeSources)}},
	} {
		if _, err := w.exec(ctx, keep.query, keep.args...); err != nil {
			return fmt.Errorf("trace %s: setting aside what it holds: %w", t.ID, err)
		}
	}
	return nil
}

// orNull is s, or nil (SQL NULL) when s is empty, for a text column that a
// statement writes through ifnull, as an empty text in place of NULL: the
// driver copies each text argument into memory of its own and frees it
// after, and most of a step's texts are empty.
func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (w *writer) putFindings(ctx context.Context, traceID string, findings []trace.Finding) error {
	for _, f := range findings {
		steps := f.Steps
		if steps == nil {
			steps = []int{}
		}
		_, err := w.exec(ctx, queryInsertFinding,
			traceID, f.Source, f.Mode, string(f.Verdict), f.Detector, jsonText(steps), f.Quote,
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
	_, err := w.exec(ctx, queryInsertOutcome,
		traceID, o.Source, o.Metric, score, success, o.Detail)
	if err != nil {
		return fmt.Errorf("trace %s outcome %s: %w", traceID, o.Source, err)
	}
	return nil
}
