package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// The readers of whole cohorts read one row per trace, its outcomes and
// findings pre-aggregated in trace_summary (see summary.go), in id order.

// LoadCohort reads the cohort of the given traces (every stored trace when
// ids is nil), and calls mark, trace by trace, for every finding of the
// selected sources (as store.MatchSource selects them) that marks a mode
// present. The marks are not kept: the caller folds them as they stream
// past.
func (s *Store) LoadCohort(ctx context.Context, ids []string, sources []string, mark func(store.Mark)) (*store.Cohort, error) {
	// Grown by appending, a million traces' rows would be copied again and
	// again (a quarter of the time the cohort took to read on 100,000):
	// the planner's count of the traces is near enough.
	expect := len(ids)
	if ids == nil {
		var estimate float64
		if err := s.db.QueryRowContext(ctx, `SELECT reltuples FROM pg_class WHERE oid = 'traces'::regclass`).Scan(&estimate); err != nil {
			return nil, fmt.Errorf("counting traces: %w", err)
		}
		expect = int(min(max(estimate, 0), 1<<26)) + 1024
	}
	c := &store.Cohort{Traces: make([]store.CohortTrace, 0, expect), Annotations: make([]store.Annotation, 0, 2*expect)}
	in := interner{}
	// By source: its place in c.Sources once seen, the last trace it
	// annotated, and whether its marks count.
	type sourceState struct {
		place, last int32
		selected    bool
	}
	states := map[string]*sourceState{}
	var last *sourceState // of the source named lastName
	lastName := ""
	var outcomes []trace.Outcome
	err := s.eachSummary(ctx, ids, func(r *summaryRow) error {
		id := string(r.id)
		t := store.CohortTrace{Model: c.NameOf(in.of(r.model)), System: c.NameOf(in.of(r.system)), Scenario: c.NameOf(in.of(r.scenario)),
			Detected: len(r.detectedWith) > 0}
		var err error
		if outcomes, err = eachOutcome(r.outcomes, in, outcomes[:0]); err != nil {
			return fmt.Errorf("trace %s outcomes: %w", id, err)
		}
		if o := trace.PrimaryOutcome(outcomes); o != nil {
			t.Outcome = c.KeepOutcome(o)
		} else {
			t.Undecided = c.NameOf(store.UndecidedStatus(outcomes))
		}
		i := c.AddTrace(id, t)
		err = eachFinding(r.findings, in, true, func(f *summaryFinding) error {
			st := last
			if f.source != lastName {
				st = states[f.source]
				last, lastName = st, f.source
			}
			if st == nil {
				st = &sourceState{place: int32(len(c.Sources)), last: -1, selected: store.MatchSource(f.source, sources)}
				states[f.source] = st
				last = st
				c.Sources = append(c.Sources, f.source)
			}
			if st.last != i {
				st.last = i
				c.Annotate(i, st.place)
			}
			if f.verdict != trace.Present || f.noMode || !st.selected {
				return nil
			}
			steps, err := parseSteps(f.steps)
			if err != nil {
				return err
			}
			first := int32(-1)
			if len(steps) > 0 {
				first = int32(steps[0])
			}
			mark(store.Mark{Trace: i, Step: first, Mode: f.mode})
			return nil
		})
		if err != nil {
			return fmt.Errorf("trace %s: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the cohort: %w", err)
	}
	c.SortSources()
	return c, nil
}

// TraceVerdicts calls fn with what each of the given traces holds for
// comparing sources, in id order. fn must not keep what it is given, which
// is reused.
func (s *Store) TraceVerdicts(ctx context.Context, ids []string, fn func(store.TraceVerdicts) error) error {
	var t store.TraceVerdicts
	in := interner{}
	err := s.eachSummary(ctx, ids, func(r *summaryRow) error {
		t.Trace, t.DetectedWith = string(r.id), in.of(r.detectedWith)
		t.Sources, t.Verdicts = t.Sources[:0], t.Verdicts[:0]
		err := eachFinding(r.findings, in, false, func(f *summaryFinding) error {
			if !slices.Contains(t.Sources, f.source) {
				t.Sources = append(t.Sources, f.source)
			}
			if f.noMode {
				return nil
			}
			v := store.ModeVerdict{Trace: t.Trace, Source: f.source, Mode: f.mode, Verdict: f.verdict}
			if v.Verdict == trace.Present {
				var err error
				if v.Steps, err = parseSteps(f.steps); err != nil {
					return err
				}
			}
			t.Verdicts = append(t.Verdicts, v)
			return nil
		})
		if err != nil {
			return fmt.Errorf("trace %s: %w", t.Trace, err)
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
