package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/store/sqlshared"
	"github.com/faultline/faultline/trace"
)

// List returns the traces matching f, ordered by model, then id.
func (s *Store) List(ctx context.Context, f store.Filter) ([]store.Summary, error) {
	var a args
	where, err := s.filterConditions(ctx, &f, &a)
	if err != nil {
		return nil, err
	}
	var ids, files map[string]bool
	if f.Select != nil {
		ids, files = set(f.Select.IDs), set(f.Select.Files)
	}
	var out []store.Summary
	err = s.each(ctx, `SELECT t.id, t.file, t.format, t.system, t.model, t.task, t.scenario, t.trial, t.step_count, t.source FROM traces t`+
		where.where()+` ORDER BY t.model, t.id`, a, func(rows *sql.Rows) error {
		var sm store.Summary
		var file string
		if err := rows.Scan(&sm.ID, &file, &sm.Format, &sm.System, &sm.Model, &sm.Task, &sm.Scenario, &sm.Trial, &sm.Steps, &sm.Source); err != nil {
			return err
		}
		if (f.Select == nil || ids[sm.ID] || files[file]) && (f.Limit <= 0 || len(out) < f.Limit) {
			out = append(out, sm)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing traces: %w", err)
	}
	if err := s.attachOutcomes(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

func set(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, v := range list {
		m[v] = true
	}
	return m
}

// each runs a query and calls scan for each row.
func (s *Store) each(ctx context.Context, query string, a args, scan func(*sql.Rows) error) error {
	return sqlshared.Each(ctx, s.db, query, a, scan)
}

// attachOutcomes reads the outcomes of the listed traces and sets their
// primary outcome.
func (s *Store) attachOutcomes(ctx context.Context, out []store.Summary) error {
	if len(out) == 0 {
		return nil
	}
	index := make(map[string]int, len(out))
	ids := make([]string, len(out))
	for i, sm := range out {
		index[sm.ID], ids[i] = i, sm.ID
	}
	return sqlshared.AttachOutcomes(out, index, func(scan func(*sql.Rows) error) error {
		return s.each(ctx, `SELECT trace_id, source, metric, score, success, detail FROM outcomes WHERE trace_id = ANY($1) ORDER BY trace_id, source`, args{ids}, scan)
	})
}

// Resolve turns a trace id or a unique prefix of one into the full id.
func (s *Store) Resolve(ctx context.Context, idOrPrefix string) (string, error) {
	ids, err := s.column(ctx, `SELECT id FROM traces WHERE starts_with(id, $1) ORDER BY id <> $1, id LIMIT 6`, args{idOrPrefix})
	if err != nil {
		return "", fmt.Errorf("trace %q: %w", idOrPrefix, err)
	}
	return store.ResolveAmong(idOrPrefix, ids)
}

// Load reads a whole trace: steps, every finding and every outcome.
func (s *Store) Load(ctx context.Context, id string) (*trace.Trace, error) {
	return store.LoadWhole(ctx, s, id)
}

// LoadHeader reads a trace without its steps (findings and outcomes
// included) and says how many steps it has, for views that page through
// long traces.
func (s *Store) LoadHeader(ctx context.Context, id string) (*trace.Trace, int, error) {
	return sqlshared.LoadHeader(ctx, s.db, id, "$1", s.Findings)
}

// parseTime reads a stored time.
var parseTime = sqlshared.ParseTime

// StepRange reads the steps of a trace with indices from..to-1.
func (s *Store) StepRange(ctx context.Context, id string, from, to int) ([]trace.Step, error) {
	if max(from, 0) >= to {
		return nil, nil
	}
	return s.steps(ctx, id, " AND idx >= $2 AND idx < $3", args{max(from, 0), min(to, 1<<31-1)})
}

// StepsAt reads the steps of a trace at the given indices, in order;
// indices the trace does not have are left out.
func (s *Store) StepsAt(ctx context.Context, id string, idx []int) ([]trace.Step, error) {
	var want []int32
	for _, n := range idx {
		if n >= 0 && n < 1<<31 {
			want = append(want, int32(n))
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	return s.steps(ctx, id, " AND idx = ANY($2)", args{want})
}

// steps reads the steps of a trace that meet cond (conditions on idx whose
// parameters, from $2, are a), in order.
func (s *Store) steps(ctx context.Context, id, cond string, a args) ([]trace.Step, error) {
	var out []trace.Step
	err := s.each(ctx, `SELECT idx, kind, role, agent, text, tool, args, call_id, pair, exit_code, is_error, time, tokens, type, span_id
		FROM steps WHERE trace_id = $1`+cond+` ORDER BY idx`, append(args{id}, a...), func(rows *sql.Rows) error {
		var st trace.Step
		var kind, ts string
		var pair, exit *int
		if err := rows.Scan(&st.Index, &kind, &st.Role, &st.Agent, &st.Text, &st.Tool, &st.Args, &st.CallID, &pair, &exit, &st.IsError, &ts, &st.Tokens, &st.Type, &st.SpanID); err != nil {
			return err
		}
		st.Kind, st.Time, st.Pair, st.ExitCode = trace.Kind(kind), parseTime(ts), pair, exit
		out = append(out, st)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("trace %s steps: %w", id, err)
	}
	return out, nil
}

// Findings returns every finding on a trace, ordered by first cited step,
// then as stored.
func (s *Store) Findings(ctx context.Context, traceID string) ([]trace.Finding, error) {
	var out []trace.Finding
	err := s.each(ctx, `SELECT `+findingColumns+` FROM findings WHERE trace_id = $1 ORDER BY id`, args{traceID}, func(rows *sql.Rows) error {
		var f trace.Finding
		err := scanFinding(rows, &f)
		out = append(out, f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("trace %s findings: %w", traceID, err)
	}
	slices.SortStableFunc(out, func(a, b trace.Finding) int { return a.FirstStep() - b.FirstStep() })
	return out, nil
}

// EachFinding calls fn with each finding q selects on the given traces,
// trace by trace in id order, a trace's findings in the order they were
// stored: one query for them all, not a round trip per trace.
func (s *Store) EachFinding(ctx context.Context, ids []string, q store.FindingQuery, fn func(store.TraceFinding) error) error {
	a := args{nonNil(ids)}
	where := sourceMatch("source", q.Sources, &a)
	if q.RawLabel != "" {
		where += ` AND raw_label = ` + a.add(q.RawLabel)
	}
	err := s.each(ctx, `SELECT trace_id, `+findingColumns+` FROM findings WHERE trace_id = ANY($1)`+where+` ORDER BY trace_id, id`, a,
		func(rows *sql.Rows) error {
			var f store.TraceFinding
			if err := scanFinding(rows, &f.Finding, &f.Trace); err != nil {
				return fmt.Errorf("trace %s: %w", f.Trace, err)
			}
			return fn(f)
		})
	if err != nil {
		return fmt.Errorf("reading findings: %w", err)
	}
	return nil
}

// findingColumns are a finding's columns, as scanFinding reads them.
const findingColumns = `source, mode, verdict, detector, steps, quote, confidence, explanation, taxonomy, raw_label`

// scanFinding reads a row of lead's columns, then findingColumns, into f.
func scanFinding(rows *sql.Rows, f *trace.Finding, lead ...any) error {
	var steps string
	if err := rows.Scan(append(lead, &f.Source, &f.Mode, &f.Verdict, &f.Detector, &steps, &f.Quote, &f.Confidence, &f.Explanation, &f.Taxonomy, &f.RawLabel)...); err != nil {
		return err
	}
	var err error
	f.Steps, err = decodeSteps(steps)
	return err
}

// decodeSteps reads a finding's steps as stored (a JSON array), nil for
// none.
func decodeSteps(text string) ([]int, error) {
	var steps []int
	if err := json.Unmarshal([]byte(text), &steps); err != nil {
		return nil, fmt.Errorf("finding steps %q: %w", text, err)
	}
	if len(steps) == 0 {
		return nil, nil
	}
	return steps, nil
}

// DetectedWith returns, for the given traces, the detector set their stored
// detector findings came from ("" when detectors never ran).
func (s *Store) DetectedWith(ctx context.Context, ids []string) (map[string]string, error) {
	out := map[string]string{}
	err := s.each(ctx, `SELECT id, detected_with FROM traces WHERE id = ANY($1)`, args{nonNil(ids)}, func(rows *sql.Rows) error {
		var id, with string
		err := rows.Scan(&id, &with)
		out[id] = with
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading detector sets: %w", err)
	}
	return out, nil
}

// Sources lists the annotation sources present on the given traces, sorted.
func (s *Store) Sources(ctx context.Context, ids []string) ([]string, error) {
	out, err := s.column(ctx, `SELECT DISTINCT source FROM findings WHERE trace_id = ANY($1) ORDER BY source`, args{nonNil(ids)})
	if err != nil {
		return nil, fmt.Errorf("reading sources: %w", err)
	}
	return out, nil
}

// column runs a query of one text column and returns its values (an empty
// list when there are none).
func (s *Store) column(ctx context.Context, query string, a args) ([]string, error) {
	out := []string{}
	err := s.each(ctx, query, a, func(rows *sql.Rows) error {
		var v string
		err := rows.Scan(&v)
		out = append(out, v)
		return err
	})
	return out, err
}
