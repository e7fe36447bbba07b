package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/store/sqlshared"
	"github.com/faultline/faultline/trace"
)

// LoadCohort reads the cohort of the given traces (every stored trace when
// ids is nil) from their summaries, and calls mark, trace by trace, for
// every finding of the selected sources (as MatchSource selects them) that
// marks a mode present. The marks, the bulk of the data, are not kept: the
// caller folds them into whatever compact form it needs as they stream
// past.
func (s *Store) LoadCohort(ctx context.Context, ids []string, sources []string, mark func(store.Mark)) (*store.Cohort, error) {
	names, err := s.summarySources(ctx)
	if err != nil {
		return nil, err
	}
	// By source number: whether its marks count, its place in c.Sources
	// once seen, and the last trace it annotated.
	selected := make([]bool, len(names))
	place := make([]int32, len(names))
	last := make([]int32, len(names))
	for i, name := range names {
		selected[i] = store.MatchSource(name, sources)
		place[i], last[i] = -1, -1
	}
	// Grown by doubling, a million traces' rows would be copied again and
	// again, into memory fresh from the system each time.
	expect := len(ids)
	if ids == nil {
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM traces`).Scan(&expect); err != nil {
			return nil, fmt.Errorf("counting traces: %w", err)
		}
	}
	c := &store.Cohort{Traces: make([]store.CohortTrace, 0, expect), Annotations: make([]store.Annotation, 0, 2*expect)}
	intern := map[string]string{}
	in := func(v string) string {
		if w, ok := intern[v]; ok {
			return w
		}
		v = strings.Clone(v) // not the row it was cut from
		intern[v] = v
		return v
	}
	var outcomes []trace.Outcome
	// A cohort's outcome lists take a few values: each is read once (of
	// the first maxOutcomeLists).
	type readOutcomes struct {
		outcome   store.Outcome
		undecided store.Name
	}
	outcomeLists := map[string]readOutcomes{}
	err = s.eachSummary(ctx, ids, func(row summaryRow) error {
		id, outcomeList, findingList := row.id, row.outcomes, row.findings
		t := store.CohortTrace{Model: c.NameOf(row.model), System: c.NameOf(row.system), Scenario: c.NameOf(row.scenario), Detected: row.detectorSet != ""}
		seen, ok := outcomeLists[outcomeList]
		if !ok {
			outcomes = outcomes[:0]
			err := eachOutcome(outcomeList, func(o trace.Outcome) {
				o.Source, o.Metric = in(o.Source), in(o.Metric)
				outcomes = append(outcomes, o)
			})
			if err != nil {
				return fmt.Errorf("trace %s outcomes: %w", id, err)
			}
			if o := trace.PrimaryOutcome(outcomes); o != nil {
				seen.outcome = c.KeepOutcome(o)
			} else {
				seen.undecided = c.NameOf(store.UndecidedStatus(outcomes))
			}
			if len(outcomeLists) < maxOutcomeLists {
				outcomeLists[strings.Clone(outcomeList)] = seen
			}
		}
		t.Outcome, t.Undecided = seen.outcome, seen.undecided
		i := c.AddTrace(id, t)
		unknown := false
		err = eachFinding(findingList, true, func(f summaryFinding) {
			if f.source >= len(names) {
				unknown = true
				return
			}
			if last[f.source] != i {
				last[f.source] = i
				if place[f.source] < 0 {
					place[f.source] = int32(len(c.Sources))
					c.Sources = append(c.Sources, names[f.source])
				}
				c.Annotate(i, place[f.source])
			}
			if f.verdict == trace.Present && f.mode != "" && selected[f.source] {
				mark(store.Mark{Trace: i, Step: leadingStep(f.steps), Mode: in(f.mode)})
			}
		})
		if err == nil && unknown {
			err = errSummary
		}
		if err != nil {
			return fmt.Errorf("trace %s findings: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading trace summaries: %w", err)
	}
	c.SortSources()
	return c, nil
}

// leadingStep reads the first number of a JSON array of step indices such
// as [12,4]; -1 for an empty array or anything else.
func leadingStep(steps string) int32 {
	rest, ok := strings.CutPrefix(strings.TrimSpace(steps), "[")
	rest = strings.TrimSpace(rest)
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	if !ok || end == 0 || end > 9 {
		return -1
	}
	n, _ := strconv.Atoi(rest[:end])
	return int32(n)
}

// eachSelected runs a query over the selected traces, calling scan for each
// row: one pass over the table when ids is nil (every trace), else in
// chunks of ids. The query's %s is where "AND column IN (...)" goes.
func (s *Store) eachSelected(ctx context.Context, ids []string, column, query string, scan func(*sql.Rows) error) error {
	if ids != nil {
		return s.queryIDs(ctx, ids, fmt.Sprintf(query, "AND "+column+" IN (%s)"), scan)
	}
	return s.each(ctx, fmt.Sprintf(query, ""), scan)
}

// each runs a query and calls scan for each row.
func (s *Store) each(ctx context.Context, query string, scan func(*sql.Rows) error, args ...any) error {
	return sqlshared.Each(ctx, s.db, query, args, scan)
}

// maxOutcomeLists bounds the outcome lists LoadCohort remembers having read.
const maxOutcomeLists = 4096
