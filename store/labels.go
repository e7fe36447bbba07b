package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

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

// ModeVerdicts returns the findings with a mode (labels that could not be
// mapped to one are left out) of the sources selected as MatchSource
// selects them, on the given traces, in the order they were stored.
func (s *Store) ModeVerdicts(ctx context.Context, ids []string, sources []string) ([]ModeVerdict, error) {
	var out []ModeVerdict
	err := s.queryIDs(ctx, ids, `SELECT trace_id, source, mode, verdict, steps FROM findings
		WHERE mode != '' AND trace_id IN (%s) ORDER BY id`, func(rows *sql.Rows) error {
		var v ModeVerdict
		var verdict, steps string
		if err := rows.Scan(&v.Trace, &v.Source, &v.Mode, &verdict, &steps); err != nil {
			return err
		}
		if !MatchSource(v.Source, sources) {
			return nil
		}
		v.Verdict = trace.Verdict(verdict)
		if err := json.Unmarshal([]byte(steps), &v.Steps); err != nil {
			return fmt.Errorf("trace %s finding steps: %w", v.Trace, err)
		}
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading findings: %w", err)
	}
	return out, nil
}
