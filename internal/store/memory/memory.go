// Package memory is a store backend that keeps traces in memory: the one
// analyze, eval, report and pipeline are tested on, with no database, and
// what a program uses to report on traces it never stores. It answers the
// small interfaces those packages define the way the SQLite backend does
// (the conformance test holds the two to the same answers).
package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// Store holds traces by id, each with all its findings (every source's) and
// outcomes. It is safe for concurrent use.
type Store struct {
	mu     sync.RWMutex
	traces map[string]*trace.Trace
}

// New returns a store holding traces (replacing any of the same id, as a
// re-ingest does).
func New(traces ...*trace.Trace) *Store {
	s := &Store{traces: map[string]*trace.Trace{}}
	for _, t := range traces {
		s.traces[t.ID] = t
	}
	return s
}

// Put stores a trace, replacing any stored under its id.
func (s *Store) Put(t *trace.Trace) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.traces[t.ID] = t
}

// Load returns the trace stored under id, or store.ErrNotFound.
func (s *Store) Load(_ context.Context, id string) (*trace.Trace, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.traces[id]
	if !ok {
		return nil, fmt.Errorf("trace %q: %w", id, store.ErrNotFound)
	}
	return t, nil
}

// selected returns the traces with the given ids (every trace when ids is
// nil), ordered by id; unknown ids are left out.
func (s *Store) selected(ids []string) []*trace.Trace {
	var out []*trace.Trace
	if ids == nil {
		for _, t := range s.traces {
			out = append(out, t)
		}
	} else {
		for _, id := range ids {
			if t, ok := s.traces[id]; ok {
				out = append(out, t)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return slices.CompactFunc(out, func(a, b *trace.Trace) bool { return a.ID == b.ID })
}

// LoadCohort answers analyze.CohortLoader: the selected traces by id, the
// annotation sources on them, which source annotated which trace, and a
// mark for every present finding with a mode of the selected sources.
func (s *Store) LoadCohort(_ context.Context, ids []string, sources []string, mark func(store.Mark)) (*store.Cohort, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	traces := s.selected(ids)
	c := &store.Cohort{Traces: make([]store.CohortTrace, 0, len(traces))}
	seen := map[string]bool{}
	for _, t := range traces {
		for _, f := range t.Findings {
			if !seen[f.Source] {
				seen[f.Source] = true
				c.Sources = append(c.Sources, f.Source)
			}
		}
	}
	sort.Strings(c.Sources)
	for i, t := range traces {
		ct := store.CohortTrace{Model: c.NameOf(t.Model), System: c.NameOf(t.System), Scenario: c.NameOf(t.Scenario), Detected: t.DetectedWith != ""}
		if o := trace.PrimaryOutcome(t.Outcomes); o != nil {
			ct.Outcome = c.KeepOutcome(o)
		} else {
			ct.Undecided = c.NameOf(store.UndecidedStatus(t.Outcomes))
		}
		c.AddTrace(t.ID, ct)
		annotated := map[string]bool{}
		for _, f := range t.Findings {
			annotated[f.Source] = true
		}
		for k, src := range c.Sources {
			if annotated[src] {
				c.Annotations = append(c.Annotations, store.Annotation{Trace: int32(i), Source: int32(k)})
			}
		}
	}
	for i, t := range traces {
		for _, f := range t.Findings {
			if f.Verdict != trace.Present || f.Mode == "" || !store.MatchSource(f.Source, sources) {
				continue
			}
			step := int32(-1)
			if len(f.Steps) > 0 {
				step = int32(f.Steps[0])
			}
			mark(store.Mark{Trace: int32(i), Step: step, Mode: f.Mode})
		}
	}
	return c, nil
}

// Findings returns every finding on a trace.
func (s *Store) Findings(ctx context.Context, traceID string) ([]trace.Finding, error) {
	t, err := s.Load(ctx, traceID)
	if err != nil {
		return nil, err
	}
	return t.Findings, nil
}

// EachFinding calls fn with each finding q selects on the given traces,
// trace by trace in id order, a trace's findings in the order stored.
func (s *Store) EachFinding(_ context.Context, ids []string, q store.FindingQuery, fn func(store.TraceFinding) error) error {
	if len(ids) == 0 {
		// selected reads nil as every trace; the SQL backends, as none.
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, t := range s.selected(ids) {
		for _, f := range t.Findings {
			if !q.Match(f) {
				continue
			}
			if err := fn(store.TraceFinding{Trace: t.ID, Finding: f}); err != nil {
				return err
			}
		}
	}
	return nil
}

// DetectedWith returns, by trace id, the detector set whose findings each
// of the given traces carries.
func (s *Store) DetectedWith(_ context.Context, ids []string) (map[string]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]string{}
	for _, t := range s.selected(ids) {
		out[t.ID] = t.DetectedWith
	}
	return out, nil
}

// Sources lists the annotation sources on the given traces, sorted.
func (s *Store) Sources(_ context.Context, ids []string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for _, t := range s.selected(ids) {
		for _, f := range t.Findings {
			out = append(out, f.Source)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// ModeVerdicts calls fn with every finding with a mode of the selected
// sources on the given traces.
func (s *Store) ModeVerdicts(_ context.Context, ids []string, sources []string, fn func(store.ModeVerdict) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, t := range s.selected(ids) {
		for _, f := range t.Findings {
			if f.Mode == "" || !store.MatchSource(f.Source, sources) {
				continue
			}
			v := store.ModeVerdict{Trace: t.ID, Source: f.Source, Mode: f.Mode, Verdict: f.Verdict}
			if f.Verdict == trace.Present {
				v.Steps = f.Steps
			}
			if err := fn(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// TraceVerdicts calls fn with what each of the given traces holds for
// comparing sources, in id order.
func (s *Store) TraceVerdicts(_ context.Context, ids []string, fn func(store.TraceVerdicts) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, t := range s.selected(ids) {
		tv := store.TraceVerdicts{Trace: t.ID, DetectedWith: t.DetectedWith}
		for _, f := range t.Findings {
			if !slices.Contains(tv.Sources, f.Source) {
				tv.Sources = append(tv.Sources, f.Source)
			}
			if f.Mode == "" {
				continue
			}
			v := store.ModeVerdict{Trace: t.ID, Source: f.Source, Mode: f.Mode, Verdict: f.Verdict}
			if f.Verdict == trace.Present {
				v.Steps = f.Steps
			}
			tv.Verdicts = append(tv.Verdicts, v)
		}
		if err := fn(tv); err != nil {
			return err
		}
	}
	return nil
}

// ReplaceFindings replaces a source's findings on a trace, recording the
// detector set that produced them when detectedWith is set.
func (s *Store) ReplaceFindings(_ context.Context, traceID, source string, findings []trace.Finding, detectedWith string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.traces[traceID]
	if !ok {
		return fmt.Errorf("trace %q: %w", traceID, store.ErrNotFound)
	}
	kept := slices.DeleteFunc(slices.Clone(t.Findings), func(f trace.Finding) bool { return f.Source == source })
	for _, f := range findings {
		f.Source = source
		kept = append(kept, f)
	}
	t.Findings = kept
	if detectedWith != "" {
		t.DetectedWith = detectedWith
	}
	return nil
}

// PutOutcome stores an outcome, replacing the trace's outcome of the same
// source.
func (s *Store) PutOutcome(_ context.Context, traceID string, o trace.Outcome) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.traces[traceID]
	if !ok {
		return fmt.Errorf("trace %q: %w", traceID, store.ErrNotFound)
	}
	t.Outcomes = append(slices.DeleteFunc(t.Outcomes, func(x trace.Outcome) bool { return x.Source == o.Source }), o)
	return nil
}

// errNoIndex is a filter the memory store cannot answer: it keeps neither
// the files traces came from nor a search index.
var errNoIndex = errors.New("the memory store cannot filter by path or search text")

// List returns the traces f selects, ordered by model, then id, as the
// SQLite backend does (but for Paths and Search, which it refuses, and
// Select, which it takes by id only).
func (s *Store) List(_ context.Context, f store.Filter) ([]store.Summary, error) {
	if len(f.Paths) > 0 || f.Search != "" {
		return nil, errNoIndex
	}
	if f.Outcome != "" && !slices.Contains(store.OutcomeFilters, f.Outcome) {
		return nil, fmt.Errorf("unknown outcome %q: use one of %s", f.Outcome, strings.Join(store.OutcomeFilters, ", "))
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var models []string
	if f.Model != nil {
		for _, t := range s.traces {
			models = append(models, t.Model)
		}
		models = f.Aliases.Matching(f.Model, models)
	}
	in := func(values []string, v string) bool { return values == nil || slices.Contains(values, v) }
	var out []store.Summary
	for _, t := range s.selected(nil) {
		primary := trace.PrimaryOutcome(t.Outcomes)
		switch {
		case f.Select != nil && !slices.Contains(f.Select.IDs, t.ID),
			f.Model != nil && !slices.Contains(models, t.Model),
			!in(f.System, t.System), !in(f.Scenario, t.Scenario), !in(f.Format, t.Format),
			f.Outcome != "" && store.OutcomeClass(primary) != f.Outcome,
			!annotated(t, f.Sources), !allPresent(t, f.Modes, f.Sources):
			continue
		}
		outcomes := slices.SortedFunc(slices.Values(t.Outcomes), func(a, b trace.Outcome) int { return strings.Compare(a.Source, b.Source) })
		out = append(out, store.Summary{ID: t.ID, Format: t.Format, System: t.System, Model: t.Model, Task: t.Task, Scenario: t.Scenario,
			Trial: t.Trial, Steps: len(t.Steps), Source: t.Source, Outcome: primary, Outcomes: outcomes})
	}
	slices.SortStableFunc(out, func(a, b store.Summary) int { return strings.Compare(a.Model, b.Model) })
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// annotated says whether a selected source annotated a trace: a finding of
// any verdict, or for the detectors a run of them.
func annotated(t *trace.Trace, sources []string) bool {
	if len(sources) == 0 || (t.DetectedWith != "" && store.MatchSource(detect.Source, sources)) {
		return true
	}
	return slices.ContainsFunc(t.Findings, func(f trace.Finding) bool { return store.MatchSource(f.Source, sources) })
}

// allPresent says whether a selected source marks each of the modes
// present on a trace.
func allPresent(t *trace.Trace, modes, sources []string) bool {
	for _, m := range modes {
		if !slices.ContainsFunc(t.Findings, func(f trace.Finding) bool {
			return f.Mode == m && f.Verdict == trace.Present && store.MatchSource(f.Source, sources)
		}) {
			return false
		}
	}
	return true
}
