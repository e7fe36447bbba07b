package postgres

import (
	"context"
	"database/sql"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/store/sqlshared"
	"github.com/faultline/faultline/internal/store/storetest"
	"github.com/faultline/faultline/trace"
)

// verdictsOf reads TraceVerdicts for one trace.
func verdictsOf(t *testing.T, st *Store, id string) store.TraceVerdicts {
	t.Helper()
	var got store.TraceVerdicts
	n := 0
	err := st.TraceVerdicts(context.Background(), []string{id}, func(v store.TraceVerdicts) error {
		got = v
		got.Sources = append([]string(nil), v.Sources...)
		got.Verdicts = append([]store.ModeVerdict(nil), v.Verdicts...)
		n++
		return nil
	})
	if err != nil || n != 1 {
		t.Fatalf("TraceVerdicts(%s): %d traces, %v", id, n, err)
	}
	return got
}

// checkSummary holds the trace's summary to its findings as stored.
func checkSummary(t *testing.T, st *Store, id string) {
	t.Helper()
	var sources []string
	var want []store.ModeVerdict
	err := st.each(context.Background(), `SELECT source, mode, verdict, steps FROM findings WHERE trace_id = $1 ORDER BY id`, args{id},
		func(rows *sql.Rows) error {
			v := store.ModeVerdict{Trace: id}
			var steps string
			if err := rows.Scan(&v.Source, &v.Mode, &v.Verdict, &steps); err != nil {
				return err
			}
			if !contains(sources, v.Source) {
				sources = append(sources, v.Source)
			}
			if v.Mode == "" {
				return nil
			}
			if v.Verdict == trace.Present {
				var err error
				if v.Steps, err = decodeSteps(steps); err != nil {
					return err
				}
			}
			want = append(want, v)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	got := verdictsOf(t, st, id)
	if !reflect.DeepEqual(got.Sources, sources) || !reflect.DeepEqual(got.Verdicts, want) {
		t.Errorf("trace %s summarised as\n%v %+v\nstored\n%v %+v", id, got.Sources, got.Verdicts, sources, want)
	}
}

func contains(list []string, v string) bool {
	for _, w := range list {
		if w == v {
			return true
		}
	}
	return false
}

// TestSummaryConcurrentJudges has two judges store their findings on one
// trace at once: the second, waiting for the first, must not write the
// summary it read before the first committed.
func TestSummaryConcurrentJudges(t *testing.T) {
	ctx := context.Background()
	st, cohort := withCohort(t)
	id := cohort[0].ID
	judgement := func(source string) (store.JudgeRecord, []trace.Finding) {
		return store.JudgeRecord{Trace: id, Source: source, PromptVersion: "p1", Samples: 1, Status: "ok", Windows: 1, JudgedAt: time.Now().UTC()},
			[]trace.Finding{{Mode: "FM-1.1", Source: source, Verdict: trace.Present, Steps: []int{0}}, {Mode: "FM-2.2", Source: source, Verdict: trace.Absent}}
	}
	tx, err := st.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	recA, findingsA := judgement("judge:a")
	if err := st.PutJudgementTx(ctx, tx, recA, findingsA); err != nil {
		t.Fatal(err)
	}
	recB, findingsB := judgement("judge:b")
	done := make(chan error)
	go func() { done <- st.PutJudgement(ctx, recB, findingsB) }()
	time.Sleep(200 * time.Millisecond) // the second is waiting, or has read
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := verdictsOf(t, st, id)
	if !contains(got.Sources, "judge:a") || !contains(got.Sources, "judge:b") {
		t.Errorf("after two judges: sources %v", got.Sources)
	}
	checkSummary(t, st, id)
}

// TestSummaryOddValues stores text with quotes, escapes and the lists'
// separators, and scores whose text must read back exactly, and reads them
// back from the summary as stored; then replaces and removes them.
func TestSummaryOddValues(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	defer st.Close()
	cohort := storetest.Cohort()
	tr := cohort[0]
	odd := "a\"b\\c\x1e\x1f\n\tä€😀"
	tr.Findings = append(tr.Findings,
		trace.Finding{Source: "human:" + odd, Mode: "FM-1.1", Verdict: trace.Present, Steps: []int{2, 0}},
		trace.Finding{Source: "human:" + odd, Mode: odd, Verdict: trace.Unsure},
		trace.Finding{Source: "judge:x", Mode: "FM-1.2", Verdict: trace.Verdict(odd)},
		trace.Finding{Source: "judge:x", Mode: "", Verdict: trace.Present, Steps: []int{1}},
		trace.Finding{Source: "judge:x", Mode: "FM-1.3", Verdict: trace.Present})
	yes, no := true, false
	score, tiny := 0.1, math.SmallestNonzeroFloat64
	negZero := math.Copysign(0, -1)
	tr.Outcomes = []trace.Outcome{
		{Source: "itbench", Metric: odd, Score: &score, Success: &no, Detail: odd},
		{Source: "labels", Metric: "m", Score: &tiny, Success: &yes, Detail: `{"status":"x"}`},
		{Source: "zz" + odd, Score: &negZero},
	}
	if _, err := ingest.StoreFile(ctx, st, ingest.FileInfo{Path: "/data/cohort.jsonl", Hash: "h1", Format: "codex"}, cohort...); err != nil {
		t.Fatal(err)
	}
	checkSummary(t, st, tr.ID)
	var outcomes []trace.Outcome
	err := st.each(ctx, `SELECT trace_id, source, metric, score, success, detail FROM outcomes WHERE trace_id = $1 ORDER BY id`, args{tr.ID},
		func(rows *sql.Rows) error {
			_, o, err := sqlshared.ScanOutcome(rows)
			outcomes = append(outcomes, o)
			return err
		})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.LoadCohort(ctx, []string{tr.ID}, nil, func(store.Mark) {})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Traces) != 1 || !reflect.DeepEqual(c.Outcome(&c.Traces[0]), trace.PrimaryOutcome(outcomes)) {
		t.Errorf("primary outcome %+v, want that of %+v", c.Outcome(&c.Traces[0]), outcomes)
	}
	var summarised []trace.Outcome
	row := st.DB().QueryRowContext(ctx, `SELECT outcome_list FROM trace_summary WHERE trace_id = $1`, tr.ID)
	var list string
	if err := row.Scan(&list); err != nil {
		t.Fatal(err)
	}
	if summarised, err = eachOutcome([]byte(list), interner{}, nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(summarised, outcomes) || math.Signbit(*summarised[2].Score) != true {
		t.Errorf("outcomes summarised as %+v, stored %+v", summarised, outcomes)
	}

	// A judge's findings replaced, then the trace removed.
	if err := st.ReplaceFindings(ctx, tr.ID, "judge:x", []trace.Finding{{Source: "judge:x", Mode: "FM-3.1", Verdict: trace.Present, Steps: []int{3}}}, ""); err != nil {
		t.Fatal(err)
	}
	checkSummary(t, st, tr.ID)
	fs, err := st.File(ctx, ingest.FileInfo{Path: "/data/cohort.jsonl", Hash: "h2", Format: "codex"})
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Close(ctx, ingest.FileResult{}); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := st.DB().QueryRowContext(ctx, `SELECT count(*) FROM trace_summary`).Scan(&left); err != nil || left != 0 {
		t.Errorf("after the file's traces went: %d summaries, %v", left, err)
	}
}
