package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

// File implements ingest.Sink. It returns nil when the file's content is
// already stored under the same path; otherwise its traces replace those
// it held before. Each trace is a transaction of its own, committed
// without waiting for the disk (synchronous_commit off): PostgreSQL makes
// transactions durable in the order they commit, so a crash loses at most
// the last few traces and never a file's record without its traces, and
// the file, not recorded, is read again. A trace with fewer steps than the
// one stored under its id is refused (see ingest.FewerSteps) unless
// ReplaceFewerSteps allows it; a file with a refused or failed trace is
// not recorded as ingested, so that it is read, and reported, again.
func (s *Store) File(ctx context.Context, f ingest.FileInfo) (ingest.FileSink, error) {
	var hash string
	err := s.db.QueryRowContext(ctx, `SELECT hash FROM files WHERE path = $1`, f.Path).Scan(&hash)
	switch {
	case err == nil && hash == f.Hash:
		return nil, nil
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("looking up file: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM traces WHERE file = $1`, f.Path)
	if err != nil {
		return nil, fmt.Errorf("listing previous traces: %w", err)
	}
	defer rows.Close()
	previous := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("listing previous traces: %w", err)
		}
		previous[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing previous traces: %w", err)
	}
	return &fileSink{s: s, info: f, previous: previous}, nil
}

// Batch is the ingest sink of a run over many files. SQLite shares
// transactions between files to save commits; here each trace commits by
// itself without waiting for the disk, which costs as little, so a Batch
// writes as File does and Close has nothing left to do.
type Batch struct{ s *Store }

// Batch starts writing files (see Batch).
func (s *Store) Batch() *Batch { return &Batch{s: s} }

// File implements ingest.Sink (see Store.File).
func (b *Batch) File(ctx context.Context, f ingest.FileInfo) (ingest.FileSink, error) {
	return b.s.File(ctx, f)
}

// Load reads a stored trace (see Store.Load): what the batch wrote is
// committed already.
func (b *Batch) Load(ctx context.Context, id string) (*trace.Trace, error) { return b.s.Load(ctx, id) }

// Commit has nothing to do: every trace is committed as it is written.
func (b *Batch) Commit(context.Context) error { return nil }

// Close ends the batch; every trace is committed already.
func (b *Batch) Close(context.Context) error { return nil }

type fileSink struct {
	s      *Store
	info   ingest.FileInfo
	traces int
	// previous holds the ids of the traces the file held before that it has
	// not yet emitted again.
	previous map[string]bool
	failed   bool // a trace failed to store: the file is read again next time
}

func (fs *fileSink) Trace(ctx context.Context, t *trace.Trace) error {
	delete(fs.previous, t.ID)
	err := fs.s.write(ctx, true, func(tx *sql.Tx, conn *sql.Conn) error {
		if err := lockTrace(ctx, tx, t.ID); err != nil {
			return err
		}
		var stored int
		var from string
		err := tx.QueryRowContext(ctx, `SELECT step_count, file FROM traces WHERE id = $1`, t.ID).Scan(&stored, &from)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			stored = -1
		case err != nil:
			return fmt.Errorf("trace %s: reading its stored step count: %w", t.ID, err)
		}
		if stored > len(t.Steps) {
			fewer := &ingest.FewerSteps{ID: t.ID, Stored: stored, StoredFrom: from, Incoming: len(t.Steps), File: fs.info.Path}
			if fs.s.replaced == nil {
				return fewer
			}
			fs.s.replaced(*fewer)
		}
		return putTrace(ctx, tx, conn, fs.info.Path, t, stored >= 0)
	})
	var fewer *ingest.FewerSteps
	if err != nil && !errors.As(err, &fewer) {
		fs.failed = true
		return fmt.Errorf("%w; the trace is not stored", err)
	}
	if err == nil {
		fs.traces++
	}
	return err
}

func (fs *fileSink) Close(ctx context.Context, r ingest.FileResult) error {
	if ctx.Err() != nil {
		// Interrupted: the traces committed so far stay, whole; the file is
		// not recorded, so it is read again.
		return nil
	}
	return fs.s.write(ctx, false, func(tx *sql.Tx, _ *sql.Conn) error {
		for id := range fs.previous {
			if _, err := tx.ExecContext(ctx, `DELETE FROM traces WHERE id = $1`, id); err != nil {
				return fmt.Errorf("removing trace %s, no longer in the file: %w", id, err)
			}
		}
		hash := fs.info.Hash
		if r.Err != nil || r.Errors > 0 || fs.failed {
			hash = "" // never matches, so the file is read (and its problems reported) again
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO files (path, hash, format, size, traces, ingested_at) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (path) DO UPDATE SET hash = excluded.hash, format = excluded.format, size = excluded.size,
			traces = excluded.traces, ingested_at = excluded.ingested_at`,
			fs.info.Path, hash, fs.info.Format, fs.info.Size, fs.traces, time.Now().UTC().Format(time.RFC3339))
		if err != nil {
			return fmt.Errorf("recording file: %w", err)
		}
		return nil
	})
}

// write runs fn in a transaction and commits it; lazy commits without
// waiting for the disk (see File). fn also has the transaction's
// connection, for what database/sql cannot say, such as a COPY (see
// putSteps).
func (s *Store) write(ctx context.Context, lazy bool, fn func(*sql.Tx, *sql.Conn) error) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("starting a transaction: %w", err)
	}
	defer tx.Rollback()
	if lazy {
		if _, err := tx.ExecContext(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
			return err
		}
	}
	if err := fn(tx, conn); err != nil {
		return err
	}
	return tx.Commit()
}

// lockTrace makes the writers of one trace, in this process or another,
// take turns: the lock is on its id, held until the transaction ends, so
// that a version stored meanwhile (not yet a row to lock) is seen and
// replaced, and two replacements of a source's findings do not both
// insert theirs.
func lockTrace(ctx context.Context, tx *sql.Tx, id string) error {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, id); err != nil {
		return fmt.Errorf("trace %s: waiting for another writer of it: %w", id, err)
	}
	return nil
}

// putTrace stores a trace with its steps, bundled findings and outcomes,
// replacing the trace stored under its id, if any (replacing). What was
// added to the earlier one in faultline (labels saved in the web UI or
// imported, scores) stays with the new one, as in SQLite: findings of a
// source the trace does not bring itself, whose steps it still has, other
// than the detectors' and the judge's (of the old content), and outcomes
// of a source it does not bring, other than the format's own. The judge's
// records go with the old content.
func putTrace(ctx context.Context, tx *sql.Tx, conn *sql.Conn, file string, t *trace.Trace, replacing bool) error {
	if replacing {
		var findingSources, outcomeSources []string
		for _, f := range t.Findings {
			findingSources = append(findingSources, f.Source)
		}
		for _, o := range t.Outcomes {
			outcomeSources = append(outcomeSources, o.Source)
		}
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`DELETE FROM findings f WHERE f.trace_id = $1 AND (f.source = '` + trace.DetectorSource + `' OR starts_with(f.source, 'judge:')
				OR f.source = ANY($2) OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(f.steps::jsonb) s WHERE s::bigint >= $3))`,
				[]any{t.ID, nonNil(findingSources), len(t.Steps)}},
			{`DELETE FROM outcomes WHERE trace_id = $1 AND (source = '` + trace.FormatOutcomeSource + `' OR source = ANY($2))`,
				[]any{t.ID, nonNil(outcomeSources)}},
			{`DELETE FROM steps WHERE trace_id = $1`, []any{t.ID}},
			{`DELETE FROM judge_runs WHERE trace_id = $1`, []any{t.ID}},
		} {
			if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
				return fmt.Errorf("trace %s: replacing it: %w", t.ID, err)
			}
		}
	}
	var diagSource string
	var diagBody *string
	if t.Diagnosis != nil {
		diagSource, diagBody = t.Diagnosis.Source, &t.Diagnosis.Body
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO traces (id, file, format, source, system, model, task, scenario, trial, started, ended,
		step_count, usage, meta, diagnosis_source, diagnosis, detected_with)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
		ON CONFLICT (id) DO UPDATE SET file = excluded.file, format = excluded.format, source = excluded.source, system = excluded.system,
		model = excluded.model, task = excluded.task, scenario = excluded.scenario, trial = excluded.trial, started = excluded.started,
		ended = excluded.ended, step_count = excluded.step_count, usage = excluded.usage, meta = excluded.meta,
		diagnosis_source = excluded.diagnosis_source, diagnosis = excluded.diagnosis, detected_with = excluded.detected_with`,
		t.ID, file, t.Format, t.Source, t.System, t.Model, clean(t.Task), t.Scenario, t.Trial, formatTime(t.Started), formatTime(t.Ended),
		len(t.Steps), jsonObject(t.Usage), jsonObject(t.Meta), diagSource, diagBody, t.DetectedWith)
	if err != nil {
		return fmt.Errorf("trace %s: %w", t.ID, err)
	}
	if err := putSteps(ctx, conn, t); err != nil {
		return err
	}
	if err := putFindings(ctx, tx, t.ID, t.Findings); err != nil {
		return err
	}
	for _, o := range t.Outcomes {
		if err := putOutcome(ctx, tx, t.ID, o); err != nil {
			return err
		}
	}
	return nil
}

// stepColumns are the columns putSteps fills, in the order of its rows.
var stepColumns = []string{"trace_id", "idx", "kind", "role", "agent", "text", "tool", "args", "call_id", "time", "type", "span_id", "search",
	"pair", "exit_code", "is_error", "tokens"}

// putSteps inserts a trace's steps, with their search vectors, by COPY on
// the transaction's connection: each row is made as pgx sends the one
// before, so the client never holds all of a trace's rows encoded at once,
// and the server receives in binary what it stores (see searchVector). One
// INSERT unnesting an array per column, with the same binary vectors,
// measured a little slower on 200 MB of rollouts (2.8-4.2 s against
// 2.7-3.3 s, on a busy machine) and took the client 70-76 MB at its peak
// against 54-59 MB.
func putSteps(ctx context.Context, conn *sql.Conn, t *trace.Trace) error {
	if len(t.Steps) == 0 {
		return nil
	}
	rows := pgx.CopyFromSlice(len(t.Steps), func(i int) ([]any, error) {
		st := &t.Steps[i]
		text, args := clean(st.Text), clean(st.Args)
		return []any{t.ID, int32(st.Index), string(st.Kind), st.Role, st.Agent, text, st.Tool, args, st.CallID, formatTime(st.Time), st.Type,
			st.SpanID, searchVector(text, args, st.Tool), int32Ptr(st.Pair), int32Ptr(st.ExitCode), st.IsError, int32(st.Tokens)}, nil
	})
	err := conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("a connection of pgx's stdlib expected, not %T", dc)
		}
		_, err := c.Conn().CopyFrom(ctx, pgx.Identifier{"steps"}, stepColumns, rows)
		return err
	})
	if err != nil {
		return fmt.Errorf("trace %s steps: %w", t.ID, err)
	}
	return nil
}

// putFindings inserts findings in one statement, in order, so that their
// ids keep the order they were given in. A trace has tens of them at most,
// too few for COPY's extra round trip to pay; and a judgement is written in
// its caller's transaction (PutJudgementTx), which has no connection to
// COPY on.
func putFindings(ctx context.Context, tx *sql.Tx, traceID string, findings []trace.Finding) error {
	if len(findings) == 0 {
		return nil
	}
	n := len(findings)
	cols := make([][]string, 9) // source, mode, verdict, detector, steps, quote, explanation, taxonomy, raw_label
	for i := range cols {
		cols[i] = make([]string, n)
	}
	confidence := make([]float64, n)
	for i, f := range findings {
		steps := f.Steps
		if steps == nil {
			steps = []int{}
		}
		for c, v := range []string{f.Source, f.Mode, string(f.Verdict), f.Detector, jsonArray(steps), clean(f.Quote), clean(f.Explanation), f.Taxonomy, clean(f.RawLabel)} {
			cols[c][i] = v
		}
		confidence[i] = f.Confidence
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO findings (trace_id, source, mode, verdict, detector, steps, quote, explanation, taxonomy, raw_label, confidence)
		SELECT $1, f.source, f.mode, f.verdict, f.detector, f.steps, f.quote, f.explanation, f.taxonomy, f.raw_label, f.confidence
		FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::float8[])
		WITH ORDINALITY AS f(source, mode, verdict, detector, steps, quote, explanation, taxonomy, raw_label, confidence, n) ORDER BY f.n`,
		traceID, cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], cols[6], cols[7], cols[8], confidence)
	if err != nil {
		return fmt.Errorf("trace %s findings: %w", traceID, err)
	}
	return nil
}

func putOutcome(ctx context.Context, tx *sql.Tx, traceID string, o trace.Outcome) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO outcomes (trace_id, source, metric, score, success, detail) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (trace_id, source) DO UPDATE SET metric = excluded.metric, score = excluded.score, success = excluded.success, detail = excluded.detail`,
		traceID, o.Source, o.Metric, o.Score, o.Success, clean(o.Detail))
	if err != nil {
		return fmt.Errorf("trace %s outcome %s: %w", traceID, o.Source, err)
	}
	return nil
}

// ReplaceFindings swaps every finding of one source on a trace for the given
// ones, and records which detector set produced them when detectedWith is set.
func (s *Store) ReplaceFindings(ctx context.Context, traceID, source string, findings []trace.Finding, detectedWith string) error {
	return s.write(ctx, false, func(tx *sql.Tx, _ *sql.Conn) error {
		if err := lockTrace(ctx, tx, traceID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM findings WHERE trace_id = $1 AND source = $2`, traceID, source); err != nil {
			return fmt.Errorf("trace %s: %w", traceID, err)
		}
		if err := putFindings(ctx, tx, traceID, findings); err != nil {
			return err
		}
		if detectedWith != "" {
			if _, err := tx.ExecContext(ctx, `UPDATE traces SET detected_with = $1 WHERE id = $2`, detectedWith, traceID); err != nil {
				return fmt.Errorf("trace %s: %w", traceID, err)
			}
		}
		return nil
	})
}

// PutOutcome stores (or replaces) one source's outcome for a trace.
func (s *Store) PutOutcome(ctx context.Context, traceID string, o trace.Outcome) error {
	return s.write(ctx, false, func(tx *sql.Tx, _ *sql.Conn) error { return putOutcome(ctx, tx, traceID, o) })
}

// clean replaces NUL characters, which PostgreSQL text cannot hold (SQLite
// keeps them), with U+FFFD.
func clean(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// formatTime writes a time as SQLite's backend does: RFC 3339 in UTC, ""
// for none, so that times sort and compare as text the same way.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// jsonObject encodes usage or metadata, "{}" for none.
func jsonObject(v any) string {
	if b, err := json.Marshal(v); err == nil && string(b) != "null" {
		return clean(string(b))
	}
	return "{}"
}

func jsonArray(steps []int) string {
	b, _ := json.Marshal(steps)
	return string(b)
}

func int32Ptr(p *int) *int32 {
	if p == nil {
		return nil
	}
	v := int32(*p)
	return &v
}
