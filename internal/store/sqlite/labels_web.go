package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// Human labels are findings of a source of their own (human:<name>), one
// per trace and mode, with the verdict present, absent or unsure: the
// labeller's note is the finding's explanation, the evidence its steps and
// quote. These read and write them in faultline's label format.

// ExportLabels returns the labels of one source (its findings with a mode),
// by trace and mode.
func (s *Store) ExportLabels(ctx context.Context, source string) ([]labels.ModeLabel, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT trace_id, mode, verdict, steps, quote, explanation FROM findings
		WHERE source = ? AND mode != '' ORDER BY trace_id, mode, id`, source)
	if err != nil {
		return nil, fmt.Errorf("reading labels of %s: %w", source, err)
	}
	defer rows.Close()
	out := []labels.ModeLabel{}
	for rows.Next() {
		var l labels.ModeLabel
		var verdict, steps string
		if err := rows.Scan(&l.Trace, &l.Mode, &verdict, &steps, &l.Quote, &l.Note); err != nil {
			return nil, err
		}
		l.Verdict = trace.Verdict(verdict)
		if err := json.Unmarshal([]byte(steps), &l.Steps); err != nil {
			return nil, fmt.Errorf("trace %s finding steps: %w", l.Trace, err)
		}
		if len(l.Steps) == 0 {
			l.Steps = nil
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// ImportLabels stores a set of labels as the findings of source, replacing
// that source's findings on every trace the set labels. A label whose
// evidence is not in its trace (a step it does not have, a quote not in the
// cited steps) is reported and left out, as are the labels of traces not
// in the store; the others are stored. It returns how many labels were
// stored.
func (s *Store) ImportLabels(ctx context.Context, set *labels.Set, source string) (int, []ingest.Issue, error) {
	var issues []ingest.Issue
	report := func(l labels.ModeLabel, format string, args ...any) {
		issues = append(issues, ingest.Issue{Path: set.Name, Line: l.Line, Severity: ingest.Error, Message: fmt.Sprintf(format, args...)})
	}
	stored := 0
	for start := 0; start < len(set.Labels); {
		// The set is ordered by trace: one trace's labels at a time.
		end := start
		for end < len(set.Labels) && set.Labels[end].Trace == set.Labels[start].Trace {
			end++
		}
		group := set.Labels[start:end]
		start = end
		t, err := s.Load(ctx, group[0].Trace)
		if errors.Is(err, store.ErrNotFound) {
			report(group[0], "trace %q is not in the database; its labels are skipped", group[0].Trace)
			continue
		}
		if err != nil {
			return stored, issues, err
		}
		var findings []trace.Finding
		for _, l := range group {
			f := labels.Finding(l, source)
			if err := f.CheckEvidence(t); err != nil {
				report(l, "%v; label skipped", err)
				continue
			}
			findings = append(findings, f)
		}
		if err := s.ReplaceFindings(ctx, t.ID, source, findings, ""); err != nil {
			return stored, issues, err
		}
		stored += len(findings)
	}
	return stored, issues, nil
}

// LabelledTraces counts the traces with a finding of source.
func (s *Store) LabelledTraces(ctx context.Context, source string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(DISTINCT trace_id) FROM findings WHERE source = ?`, source).Scan(&n)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("counting the traces of %s: %w", source, err)
	}
	return n, nil
}
