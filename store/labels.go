package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/faultline/faultline/trace"
)

// ModeVerdict is one stored finding reduced to what comparing annotation
// sources needs: who said what about which mode of which trace, and where.
type ModeVerdict struct {
	Trace   string
	Source  string
	Mode    string
	Verdict trace.Verdict
	Steps   []int
}

// ModeVerdicts calls fn with each finding that has a mode (labels that
// could not be mapped to one are left out) of the sources selected as
// MatchSource selects them, on the given traces, in the order they were
// stored. It streams: comparing two sources over a large store visits
// millions of findings. Steps are decoded for present verdicts only, the
// only ones whose steps anything reads.
func (s *Store) ModeVerdicts(ctx context.Context, ids []string, sources []string, fn func(ModeVerdict) error) error {
	where, args := sourceClause(sources)
	err := s.queryIDs(ctx, ids, `SELECT trace_id, source, mode, verdict, steps FROM findings
		WHERE mode != '' AND trace_id IN (%s)`+where+` ORDER BY id`, func(rows *sql.Rows) error {
		var v ModeVerdict
		var verdict string
		var steps []byte
		if err := rows.Scan(&v.Trace, &v.Source, &v.Mode, &verdict, &steps); err != nil {
			return err
		}
		v.Verdict = trace.Verdict(verdict)
		if v.Verdict == trace.Present {
			if err := json.Unmarshal(steps, &v.Steps); err != nil {
				return fmt.Errorf("trace %s finding steps: %w", v.Trace, err)
			}
		}
		return fn(v)
	}, args...)
	if err != nil {
		return fmt.Errorf("reading findings: %w", err)
	}
	return nil
}

// sourceClause is MatchSource as SQL: " AND (...)" selecting the sources
// named and those under them ("judge" selects "judge:gpt-4.1"), as ranges
// the findings_source index can serve; empty when every source is wanted.
func sourceClause(sources []string) (string, []any) {
	if len(sources) == 0 {
		return "", nil
	}
	var terms []string
	var args []any
	for _, want := range sources {
		// "want:" ≤ source < "want;" holds exactly for the sources that
		// start with "want:", ';' being the byte after ':'.
		terms = append(terms, "source = ? OR (source >= ? AND source < ?)")
		args = append(args, want, want+":", want+";")
	}
	return " AND (" + strings.Join(terms, " OR ") + ")", args
}
