package postgres

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// args collects a query's parameters; add returns the placeholder of the
// one it appends.
type args []any

func (a *args) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// conditions is a list of SQL conditions on traces t, joined by AND.
type conditions []string

func (c conditions) where() string {
	if len(c) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c, " AND ")
}

// traceQueryConditions is filterConditions with the browsing-only
// selections of a TraceQuery.
func (s *Store) traceQueryConditions(ctx context.Context, q *store.TraceQuery, a *args) (conditions, error) {
	f := q.Filter()
	where, err := s.filterConditions(ctx, &f, a)
	if err != nil {
		return nil, err
	}
	if q.ModeCount != nil {
		codes := make([]string, len(taxonomy.MAST.Modes))
		for i, m := range taxonomy.MAST.Modes {
			codes[i] = m.Code
		}
		where = append(where, `(SELECT COUNT(DISTINCT f.mode) FROM findings f WHERE f.trace_id = t.id AND f.verdict = 'present' AND f.mode = ANY(`+
			a.add(codes)+`)`+sourceMatch("f.source", q.Sources, a)+`) = `+a.add(*q.ModeCount))
	}
	if q.Unlabelled != "" {
		where = append(where, `NOT EXISTS (SELECT 1 FROM findings f WHERE f.trace_id = t.id AND f.source = `+a.add(q.Unlabelled)+`)`)
	}
	return where, nil
}

// filterConditions turns a filter, its selection and limit aside, into
// conditions on traces t (see store.Filter for what each field means).
func (s *Store) filterConditions(ctx context.Context, f *store.Filter, a *args) (conditions, error) {
	var where conditions
	if f.Model != nil {
		stored, err := s.Values(ctx, "model")
		if err != nil {
			return nil, err
		}
		where = append(where, "t.model = ANY("+a.add(f.Aliases.Matching(f.Model, stored))+")")
	}
	for _, field := range []struct {
		col    string
		values []string
	}{{"t.system", f.System}, {"t.scenario", f.Scenario}, {"t.format", f.Format}} {
		if field.values != nil {
			where = append(where, field.col+" = ANY("+a.add(field.values)+")")
		}
	}
	switch f.Outcome {
	case "":
	case "success":
		where = append(where, primarySuccess(a)+" = true")
	case "failure":
		where = append(where, primarySuccess(a)+" = false")
	case "unknown":
		where = append(where, primarySuccess(a)+" IS NULL")
	default:
		return nil, fmt.Errorf("unknown outcome %q: use one of %s", f.Outcome, strings.Join(store.OutcomeFilters, ", "))
	}
	if len(f.Sources) > 0 {
		annotated := `EXISTS (SELECT 1 FROM findings f WHERE f.trace_id = t.id` + sourceMatch("f.source", f.Sources, a) + `)`
		if store.MatchSource(detect.Source, f.Sources) {
			// The detectors' silence on a trace they ran on is a verdict.
			annotated = "(t.detected_with <> '' OR " + annotated + ")"
		}
		where = append(where, annotated)
	}
	for _, mode := range f.Modes {
		where = append(where, `EXISTS (SELECT 1 FROM findings f WHERE f.trace_id = t.id AND f.mode = `+a.add(mode)+
			` AND f.verdict = 'present'`+sourceMatch("f.source", f.Sources, a)+`)`)
	}
	if f.Search != "" {
		query, err := searchQuery(f.Search)
		if err != nil {
			return nil, err
		}
		where = append(where, `t.id IN (SELECT trace_id FROM steps WHERE search @@ `+a.add(query)+`::text::tsquery)`)
	}
	if len(f.Paths) > 0 {
		var ors []string
		for _, p := range f.Paths {
			abs, err := filepath.Abs(p)
			if err != nil {
				return nil, fmt.Errorf("path %s: %w", p, err)
			}
			under := strings.TrimSuffix(abs, string(filepath.Separator)) + string(filepath.Separator)
			ors = append(ors, "t.file = "+a.add(abs)+" OR starts_with(t.file, "+a.add(under)+")")
		}
		where = append(where, "("+strings.Join(ors, " OR ")+")")
	}
	return where, nil
}

// primarySuccess is an SQL expression for the success of trace t's primary
// outcome (NULL when none is decided), picked as trace.PrimaryOutcome
// picks it.
func primarySuccess(a *args) string {
	return `(SELECT o.success FROM outcomes o WHERE o.trace_id = t.id AND o.success IS NOT NULL
		ORDER BY array_position(` + a.add(trace.OutcomePreference()) + `::text[], o.source::text) NULLS LAST, o.source LIMIT 1)`
}

// sourceMatch is store.MatchSource in SQL: an " AND (...)" clause on col
// selecting the sources named or prefixed ("judge" selects judge:x), ""
// when every source is.
func sourceMatch(col string, selected []string, a *args) string {
	if len(selected) == 0 {
		return ""
	}
	list := a.add(selected)
	return " AND (" + col + " = ANY(" + list + ") OR EXISTS (SELECT 1 FROM unnest(" + list + "::text[]) w WHERE starts_with(" + col + ", w || ':')))"
}
