package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// The readers of whole cohorts read one row per trace, its outcomes and
// findings aggregated beside it, in id order: one pass through the
// indexes, streamed, where SQLite keeps a summary row per trace for the
// same purpose.

// traceRow is one trace as the cohort readers see it.
type traceRow struct {
	id, model, system, scenario, detectedWith string
	outcomes                                  []trace.Outcome
	findings                                  []rowFinding
}

// rowFinding is a finding as aggregated: source, verdict, mode, steps.
type rowFinding struct {
	source, verdict, mode, steps string
}

func (f *rowFinding) UnmarshalJSON(b []byte) error {
	var v [4]string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	f.source, f.verdict, f.mode, f.steps = v[0], v[1], v[2], v[3]
	return nil
}

// eachTrace calls fn with each of the given traces (every trace when ids
// is nil), in id order.
func (s *Store) eachTrace(ctx context.Context, ids []string, fn func(*traceRow) error) error {
	var a args
	where := ""
	if ids != nil {
		where = " WHERE t.id = ANY(" + a.add(ids) + ")"
	}
	var r traceRow
	return s.each(ctx, `SELECT t.id, t.model, t.system, t.scenario, t.detected_with,
		COALESCE((SELECT json_agg(json_build_object('source', o.source, 'metric', o.metric, 'score', o.score, 'success', o.success, 'detail', o.detail)
			ORDER BY o.id) FROM outcomes o WHERE o.trace_id = t.id), '[]'),
		COALESCE((SELECT json_agg(json_build_array(f.source, f.verdict, f.mode, f.steps) ORDER BY f.id) FROM findings f WHERE f.trace_id = t.id), '[]')
		FROM traces t`+where+` ORDER BY t.id`, a, func(rows *sql.Rows) error {
		var outcomes, findings []byte
		if err := rows.Scan(&r.id, &r.model, &r.system, &r.scenario, &r.detectedWith, &outcomes, &findings); err != nil {
			return err
		}
		r.outcomes, r.findings = r.outcomes[:0], r.findings[:0]
		if err := json.Unmarshal(outcomes, &r.outcomes); err != nil {
			return fmt.Errorf("trace %s outcomes: %w", r.id, err)
		}
		if err := json.Unmarshal(findings, &r.findings); err != nil {
			return fmt.Errorf("trace %s findings: %w", r.id, err)
		}
		return fn(&r)
	})
}

// LoadCohort reads the cohort of the given traces (every stored trace when
// ids is nil), and calls mark, trace by trace, for every finding of the
// selected sources (as store.MatchSource selects them) that marks a mode
// present. The marks are not kept: the caller folds them as they stream
// past.
func (s *Store) LoadCohort(ctx context.Context, ids []string, sources []string, mark func(store.Mark)) (*store.Cohort, error) {
	c := &store.Cohort{}
	intern := map[string]string{}
	in := func(v string) string {
		if w, ok := intern[v]; ok {
			return w
		}
		intern[v] = v
		return v
	}
	// The annotations by source name, numbered once all are known.
	var annotated [][]string
	err := s.eachTrace(ctx, ids, func(r *traceRow) error {
		i := int32(len(c.Traces))
		t := store.CohortTrace{ID: r.id, Model: in(r.model), System: in(r.system), Scenario: in(r.scenario), Detected: r.detectedWith != ""}
		if o := trace.PrimaryOutcome(r.outcomes); o != nil {
			kept := *o
			t.Outcome = &kept
		} else {
			t.Undecided = store.UndecidedStatus(r.outcomes)
		}
		c.Traces = append(c.Traces, t)
		var seen []string
		for _, f := range r.findings {
			if !slices.Contains(seen, f.source) {
				seen = append(seen, in(f.source))
			}
			if f.verdict != string(trace.Present) || f.mode == "" || !store.MatchSource(f.source, sources) {
				continue
			}
			steps, err := decodeSteps(f.steps)
			if err != nil {
				return fmt.Errorf("trace %s: %w", r.id, err)
			}
			first := int32(-1)
			if len(steps) > 0 {
				first = int32(steps[0])
			}
			mark(store.Mark{Trace: i, Step: first, Mode: in(f.mode)})
		}
		annotated = append(annotated, seen)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the cohort: %w", err)
	}
	for _, seen := range annotated {
		for _, src := range seen {
			if !slices.Contains(c.Sources, src) {
				c.Sources = append(c.Sources, src)
			}
		}
	}
	slices.Sort(c.Sources)
	for i, seen := range annotated {
		numbers := make([]int32, len(seen))
		for j, src := range seen {
			n, _ := slices.BinarySearch(c.Sources, src)
			numbers[j] = int32(n)
		}
		slices.Sort(numbers)
		for _, n := range numbers {
			c.Annotations = append(c.Annotations, store.Annotation{Trace: int32(i), Source: n})
		}
	}
	return c, nil
}

// TraceVerdicts calls fn with what each of the given traces holds for
// comparing sources, in id order. fn must not keep what it is given, which
// is reused.
func (s *Store) TraceVerdicts(ctx context.Context, ids []string, fn func(store.TraceVerdicts) error) error {
	var t store.TraceVerdicts
	err := s.eachTrace(ctx, ids, func(r *traceRow) error {
		t.Trace, t.DetectedWith = r.id, r.detectedWith
		t.Sources, t.Verdicts = t.Sources[:0], t.Verdicts[:0]
		for _, f := range r.findings {
			if !slices.Contains(t.Sources, f.source) {
				t.Sources = append(t.Sources, f.source)
			}
			if f.mode == "" {
				continue
			}
			v := store.ModeVerdict{Trace: r.id, Source: f.source, Mode: f.mode, Verdict: trace.Verdict(f.verdict)}
			if v.Verdict == trace.Present {
				var err error
				if v.Steps, err = decodeSteps(f.steps); err != nil {
					return fmt.Errorf("trace %s: %w", r.id, err)
				}
			}
			t.Verdicts = append(t.Verdicts, v)
		}
		return fn(t)
	})
	if err != nil {
		return fmt.Errorf("reading trace verdicts: %w", err)
	}
	return nil
}

// ModeVerdicts calls fn with each finding that has a mode, of the sources
// selected as store.MatchSource selects them, on the given traces, in the
// order they were stored. It streams. Steps are decoded for present
// verdicts only, the only ones anything reads.
func (s *Store) ModeVerdicts(ctx context.Context, ids []string, sources []string, fn func(store.ModeVerdict) error) error {
	a := args{nonNil(ids)}
	err := s.each(ctx, `SELECT trace_id, source, mode, verdict, steps FROM findings f WHERE mode <> '' AND trace_id = ANY($1)`+
		sourceMatch("f.source", sources, &a)+` ORDER BY id`, a, func(rows *sql.Rows) error {
		var v store.ModeVerdict
		var steps string
		if err := rows.Scan(&v.Trace, &v.Source, &v.Mode, &v.Verdict, &steps); err != nil {
			return err
		}
		if v.Verdict == trace.Present {
			var err error
			if v.Steps, err = decodeSteps(steps); err != nil {
				return fmt.Errorf("trace %s: %w", v.Trace, err)
			}
		}
		return fn(v)
	})
	if err != nil {
		return fmt.Errorf("reading findings: %w", err)
	}
	return nil
}
