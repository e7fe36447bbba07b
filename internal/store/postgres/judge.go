package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// The judge's persistence: records of judged traces and the answer cache
// (the Store implements judge.Store).

const judgeRecordColumns = `SELECT trace_id, source, prompt_version, status, error, windows, samples, agreement, summary, task_success,
	calls, input_tokens, output_tokens, cost, judged_at FROM judge_runs`

// JudgeRecords returns the judge records of one source on the given traces,
// by trace id.
func (s *Store) JudgeRecords(ctx context.Context, source string, ids []string) (map[string]store.JudgeRecord, error) {
	out := map[string]store.JudgeRecord{}
	err := s.eachJudgeRecord(ctx, judgeRecordColumns+` WHERE trace_id = ANY($1) AND source = $2`, args{nonNil(ids), source}, func(r store.JudgeRecord) {
		out[r.Trace] = r
	})
	if err != nil {
		return nil, fmt.Errorf("reading judge records: %w", err)
	}
	return out, nil
}

// TraceJudgements returns every judge's record on one trace, by source.
func (s *Store) TraceJudgements(ctx context.Context, traceID string) ([]store.JudgeRecord, error) {
	var out []store.JudgeRecord
	err := s.eachJudgeRecord(ctx, judgeRecordColumns+` WHERE trace_id = $1 ORDER BY source`, args{traceID}, func(r store.JudgeRecord) {
		out = append(out, r)
	})
	if err != nil {
		return nil, fmt.Errorf("reading the judge records of %s: %w", traceID, err)
	}
	return out, nil
}

func (s *Store) eachJudgeRecord(ctx context.Context, query string, a args, fn func(store.JudgeRecord)) error {
	return s.each(ctx, query, a, func(rows *sql.Rows) error {
		var r store.JudgeRecord
		var agreement, judgedAt string
		if err := rows.Scan(&r.Trace, &r.Source, &r.PromptVersion, &r.Status, &r.Error, &r.Windows, &r.Samples, &agreement, &r.Summary, &r.TaskSuccess,
			&r.Calls, &r.InputTokens, &r.OutputTokens, &r.Cost, &judgedAt); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(agreement), &r.Agreement); err != nil {
			return fmt.Errorf("trace %s judge record agreement: %w", r.Trace, err)
		}
		r.JudgedAt = parseTime(judgedAt)
		fn(r)
		return nil
	})
}

// PutJudgement replaces the findings of r.Source on r.Trace with findings and
// stores r, in one transaction: an interrupted run leaves either the whole
// judgement or none of it.
func (s *Store) PutJudgement(ctx context.Context, r store.JudgeRecord, findings []trace.Finding) error {
	return s.write(ctx, false, func(tx *sql.Tx, _ *sql.Conn) error { return putJudgement(ctx, tx, r, findings) })
}

// putJudgement is PutJudgement in the caller's transaction (see
// PutJudgementTx).
func putJudgement(ctx context.Context, tx *sql.Tx, r store.JudgeRecord, findings []trace.Finding) error {
	agreement := r.Agreement
	if agreement == nil {
		agreement = map[string]float64{}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM findings WHERE trace_id = $1 AND source = $2`, r.Trace, r.Source); err != nil {
		return fmt.Errorf("trace %s: %w", r.Trace, err)
	}
	if err := putFindings(ctx, tx, r.Trace, findings); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO judge_runs (trace_id, source, prompt_version, status, error, windows, samples, agreement, summary,
		task_success, calls, input_tokens, output_tokens, cost, judged_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
		ON CONFLICT (trace_id, source) DO UPDATE SET prompt_version = excluded.prompt_version, status = excluded.status, error = excluded.error,
		windows = excluded.windows, samples = excluded.samples, agreement = excluded.agreement, summary = excluded.summary,
		task_success = excluded.task_success, calls = excluded.calls, input_tokens = excluded.input_tokens,
		output_tokens = excluded.output_tokens, cost = excluded.cost, judged_at = excluded.judged_at`,
		r.Trace, r.Source, r.PromptVersion, r.Status, clean(r.Error), r.Windows, r.Samples, jsonObject(agreement), clean(r.Summary), r.TaskSuccess,
		r.Calls, r.InputTokens, r.OutputTokens, r.Cost, formatTime(r.JudgedAt))
	if err != nil {
		return fmt.Errorf("trace %s judge record: %w", r.Trace, err)
	}
	return nil
}

// CachedAnswer returns the judge's cached answer under key, or nil.
func (s *Store) CachedAnswer(ctx context.Context, key string) (*store.CacheEntry, error) {
	e := &store.CacheEntry{Key: key}
	err := s.db.QueryRowContext(ctx, `SELECT model, content, input_tokens, output_tokens FROM judge_cache WHERE key = $1`, key).
		Scan(&e.Model, &e.Content, &e.InputTokens, &e.OutputTokens)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("judge cache: %w", err)
	}
	return e, nil
}

// PutCachedAnswer stores (or replaces) a cached answer.
func (s *Store) PutCachedAnswer(ctx context.Context, e store.CacheEntry) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO judge_cache (key, model, content, input_tokens, output_tokens, created_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (key) DO UPDATE SET model = excluded.model, content = excluded.content, input_tokens = excluded.input_tokens,
		output_tokens = excluded.output_tokens, created_at = excluded.created_at`,
		e.Key, e.Model, clean(e.Content), e.InputTokens, e.OutputTokens, time.Now().UTC().Format(time.RFC3339))
	if err != nil {
		return fmt.Errorf("judge cache: %w", err)
	}
	return nil
}
