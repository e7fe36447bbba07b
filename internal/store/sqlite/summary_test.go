package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/internal/pipeline"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// TestSummaryFollowsWrites holds trace_summary to a recount from the
// traces, findings and outcomes tables after every kind of write: an
// ingest, a changed file read again (labels kept, a trace dropped), a
// detector run, a judge run, a label save, an outcome replaced, findings
// deleted one at a time and a trace deleted. The values are chosen to be
// hard to keep: quotes, separators and bytes that are not UTF-8 in modes
// and sources, verdicts outside the three, scores of 17 digits, the same
// finding twice.
func TestSummaryFollowsWrites(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	check := func(when string) {
		t.Helper()
		got, want := summaryDump(t, st.db, true), summaryDump(t, st.db, false)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("after %s the summary says\n%v\nand a recount\n%v", when, got, want)
		}
	}
	third, tiny := 1.0/3, math.SmallestNonzeroFloat64
	yes, no := true, false
	mk := func(id string, steps int, fs ...trace.Finding) *trace.Trace {
		tr := &trace.Trace{ID: id, Format: "codex", Model: "m\x1fo:d,el", System: "sy\"s", Scenario: "s\\1", DetectedWith: "r1"}
		for range steps {
			tr.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant, Text: "x"})
		}
		tr.Findings = fs
		tr.Outcomes = []trace.Outcome{{Source: "itbench", Metric: "recall", Score: &third, Success: &yes},
			{Source: "other\x1e", Metric: "m", Score: &tiny, Detail: "{\"status\":\"not a diagnosis\"}\x1f"}}
		return tr
	}
	f := func(src, mode string, v trace.Verdict, steps ...int) trace.Finding {
		return trace.Finding{Source: src, Mode: mode, Verdict: v, Steps: steps}
	}
	odd := []trace.Finding{
		f("detector", "FM-1.3", trace.Present, 4, 2), f("detector", "FM-1.3", trace.Present, 4, 2),
		f("judge:x", "FM-1.3", trace.Present, 7), f("judge:x", "FM-2.6", trace.Absent),
		f("mad:annotator_1", "", trace.Present), f("mad:annotator_1", "1.1", trace.Unsure),
		f("we\x1eird\xff", "FM-\"3.3\"\x1f\xfe", "maybe\x1e"), f("we\x1eird\xff", "SYS-1", trace.Present),
	}
	file := ingest.FileInfo{Path: "/f", Hash: "1"}
	if _, err := ingest.StoreFile(ctx, st, file, mk("a", 10, odd...), mk("b", 3, f("judge:x", "FM-2.1", trace.Present, 1)), mk("c", 2)); err != nil {
		t.Fatal(err)
	}
	check("an ingest")
	// Traces without outcomes keep the row their insert wrote: one with
	// findings appended to it, one bare, with no detector set.
	d, e := mk("d", 1, odd[6:]...), mk("e", 0)
	d.Outcomes, e.Outcomes, e.DetectedWith, e.Model = nil, nil, "", ""
	if _, err := ingest.StoreFile(ctx, st, ingest.FileInfo{Path: "/g", Hash: "1"}, d, e); err != nil {
		t.Fatal(err)
	}
	check("an ingest of traces without outcomes")

	// A label on a; then the file changes: a is read again (its label
	// stays), b is dropped.
	if _, _, err := pipeline.ImportLabels(ctx, st, &labels.Set{Labels: []labels.ModeLabel{
		{Trace: "a", Mode: "FM-2.2", Verdict: trace.Present, Steps: []int{3}},
		{Trace: "a", Mode: "FM-1.1", Verdict: trace.Absent},
	}}, "human:ann"); err != nil {
		t.Fatal(err)
	}
	check("a label save")
	file.Hash = "2"
	if _, err := ingest.StoreFile(ctx, st, file, mk("a", 12, odd[2:]...), mk("c", 2)); err != nil {
		t.Fatal(err)
	}
	check("a file read again")

	if err := st.ReplaceFindings(ctx, "a", "detector", []trace.Finding{f("detector", "FM-1.5", trace.Present, 9)}, "r2"); err != nil {
		t.Fatal(err)
	}
	check("a detector run")
	record := store.JudgeRecord{Trace: "c", Source: "judge:x", PromptVersion: "1", Status: "ok", JudgedAt: time.Now()}
	for range 2 {
		if err := st.PutJudgement(ctx, record, []trace.Finding{f("judge:x", "FM-1.1", trace.Present, 1), f("judge:x", "FM-1.2", trace.Absent)}); err != nil {
			t.Fatal(err)
		}
		check("a judge run")
	}
	if err := st.PutOutcome(ctx, "a", trace.Outcome{Source: "itbench", Metric: "recall", Success: &no}); err != nil {
		t.Fatal(err)
	}
	check("an outcome replaced")
	for {
		var id int
		if err := st.db.QueryRowContext(ctx, `SELECT id FROM findings WHERE trace_id = 'a' ORDER BY id DESC LIMIT 1 OFFSET 1`).Scan(&id); err != nil {
			break // one finding left
		}
		if _, err := st.db.ExecContext(ctx, `DELETE FROM findings WHERE id = ?`, id); err != nil {
			t.Fatal(err)
		}
		check("deleting finding " + strconv.Itoa(id))
	}
	if _, err := st.db.ExecContext(ctx, `UPDATE findings SET verdict = 'absent', steps = '[]' WHERE trace_id = 'a'`); err != nil {
		t.Fatal(err)
	}
	check("a finding changed")
	if _, err := st.db.ExecContext(ctx, `DELETE FROM traces WHERE id = 'a'`); err != nil {
		t.Fatal(err)
	}
	check("a trace deleted")
}

// summaryDump lists each trace's summary: decoded from trace_summary, or
// recounted from the traces, findings and outcomes tables. Lines are sorted:
// a summary keeps a trace's findings in the order they were written, and a
// trace read again puts back the findings it keeps in an order of their
// own.
func summaryDump(t *testing.T, db *sql.DB, fromSummary bool) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	each := func(query string, scan func(*sql.Rows) error, args ...any) {
		rows, err := db.QueryContext(ctx, query, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				t.Fatal(err)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	outcome := func(id string, o trace.Outcome) string {
		return fmt.Sprintf("%s outcome %q %q %v %v %q", id, o.Source, o.Metric, deref(o.Score), deref(o.Success), o.Detail)
	}
	if fromSummary {
		var sets []string
		each(`SELECT id, detected_with FROM summary_detector_sets`, func(rows *sql.Rows) error {
			var id int
			var set string
			err := rows.Scan(&id, &set)
			sets = append(sets, make([]string, max(0, id+1-len(sets)))...)
			sets[id] = set
			return err
		})
		names := map[int]string{}
		each(`SELECT id, source FROM summary_sources`, func(rows *sql.Rows) error {
			var id int
			var name string
			err := rows.Scan(&id, &name)
			names[id] = name
			return err
		})
		// Through the packed value, which the readers read.
		each(`SELECT packed FROM trace_summary ORDER BY trace_id`, func(rows *sql.Rows) error {
			var packed string
			if err := rows.Scan(&packed); err != nil {
				return err
			}
			row, err := unpackSummary(packed)
			if err != nil {
				return fmt.Errorf("%q: %w", packed, err)
			}
			id := row.id
			with, err := row.detectedWith(sets)
			if err != nil {
				return err
			}
			out = append(out, fmt.Sprintf("trace %q %q %q %q %q", id, row.model, row.system, row.scenario, with))
			err = eachOutcome(row.outcomes, func(o trace.Outcome) { out = append(out, outcome(id, o)) })
			if err != nil {
				return err
			}
			return eachFinding(row.findings, false, func(f summaryFinding) {
				out = append(out, fmt.Sprintf("%s finding %q %q %q %q", id, names[f.source], f.verdict, f.mode, f.steps))
			})
		})
		slices.Sort(out)
		return out
	}
	var ids []string
	each(`SELECT id, model, system, scenario, detected_with FROM traces ORDER BY id`, func(rows *sql.Rows) error {
		var id, model, system, scenario, with string
		err := rows.Scan(&id, &model, &system, &scenario, &with)
		out = append(out, fmt.Sprintf("trace %q %q %q %q %q", id, model, system, scenario, with))
		ids = append(ids, id)
		return err
	})
	var recount []string
	for i, id := range ids {
		recount = append(recount, out[i])
		each(`SELECT source, metric, score, success, detail FROM outcomes WHERE trace_id = ? ORDER BY rowid`, func(rows *sql.Rows) error {
			var o trace.Outcome
			var score sql.NullFloat64
			var success sql.NullBool
			if err := rows.Scan(&o.Source, &o.Metric, &score, &success, &o.Detail); err != nil {
				return err
			}
			if score.Valid {
				o.Score = &score.Float64
			}
			if success.Valid {
				o.Success, o.Detail = &success.Bool, ""
			}
			recount = append(recount, outcome(id, o))
			return nil
		}, id)
		each(`SELECT source, verdict, mode, CASE WHEN verdict = 'present' THEN steps ELSE '' END FROM findings WHERE trace_id = ? ORDER BY id`, func(rows *sql.Rows) error {
			var src, verdict, mode, steps string
			err := rows.Scan(&src, &verdict, &mode, &steps)
			recount = append(recount, fmt.Sprintf("%s finding %q %q %q %q", id, src, verdict, mode, steps))
			return err
		}, id)
	}
	slices.Sort(recount)
	return recount
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestEachSummary reads rows through the packed value and the reading
// goroutine: ids that hold the characters a separator would use come back
// whole and in order, in more rows than one batch holds, with and without
// a selection by id; an error of fn ends the reading and is returned.
func TestEachSummary(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	odd := []string{"a:b", "a,b", "c\x1fd", "é:1,2", ""}
	var want []string
	var traces []*trace.Trace
	for i := range 3*summaryBatch + 7 {
		id := fmt.Sprintf("t%05d%s", i, odd[i%len(odd)])
		want = append(want, id)
		traces = append(traces, sample(id, odd[(i+1)%len(odd)], nil))
	}
	ingestFile(t, st, "many.jsonl", "h", traces...)
	slices.Sort(want)
	for _, tc := range []struct {
		name string
		ids  []string
		want []string
	}{
		{"all", nil, want},
		{"a few", []string{want[3], want[1], "missing"}, []string{want[1], want[3]}},
		{"most", want[5:], want[5:]},
		{"none", []string{}, nil},
	} {
		var got []string
		err := st.eachSummary(ctx, tc.ids, func(row summaryRow) error {
			if row.model != odd[(slices.Index(want, row.id)+1)%len(odd)] && len(tc.ids) == 0 {
				return fmt.Errorf("trace %q: model %q", row.id, row.model)
			}
			got = append(got, row.id)
			return nil
		})
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %d rows, %v; want %d", tc.name, len(got), err, len(tc.want))
		}
	}
	stop := errors.New("enough")
	rows := 0
	err := st.eachSummary(ctx, nil, func(summaryRow) error {
		if rows++; rows == summaryBatch+2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || rows != summaryBatch+2 {
		t.Errorf("fn's error after %d rows: %v", rows, err)
	}
}

func TestUnpackSummary(t *testing.T) {
	for _, tc := range []struct {
		packed string
		want   []string // nil: unreadable
	}{
		{"1,0,2,0,1,3:abcdeoutcfind", []string{"a", "", "bc", "", "d", "eou", "tcfind"}},
		{"3,2,0,0,0,0::,::,x", []string{":,:", ":,", "", "", "", "", "x"}},
		{"0,0,0,0,0,0:", []string{"", "", "", "", "", "", ""}},
		{"1,0,0,0,0,0", nil},
		{"1,0,0,0,0:abc", nil},
		{"1,0,0,0,0,0,0:abc", nil},
		{"1,9,0,0,0,0:abc", nil},
		{"-1,0,0,0,0,0:abc", nil},
		{"x,0,0,0,0,0:abc", nil},
	} {
		row, err := unpackSummary(tc.packed)
		got := []string{row.id, row.model, row.system, row.scenario, row.detectorSet, row.outcomes, row.findings}
		if tc.want == nil {
			if err == nil {
				t.Errorf("%q: read as %q", tc.packed, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, %v; want %q", tc.packed, got, err, tc.want)
		}
	}
}

// TestEachFindingPresentOnly reads a list whole and for the report: the
// report's reading keeps every entry's source, and the mode and steps of
// present verdicts only.
func TestEachFindingPresentOnly(t *testing.T) {
	list := "\x1e1+\"FM-1.3\"[4,2]\x1f\x1e2-\"FM-2.1\"\x1f\x1e3?\"FM-3\\u001f\"\x1f\x1e10\"odd\"\"FM-1.1\"\x1f"
	for _, tc := range []struct {
		presentOnly bool
		want        string
	}{
		{false, `[{1 present FM-1.3 [4,2]} {2 absent FM-2.1 } {3 unsure FM-3` + "\x1f" + ` } {10 odd FM-1.1 }]`},
		{true, `[{1 present FM-1.3 [4,2]} {2 absent  } {3 absent  } {10 absent  }]`},
	} {
		var got []summaryFinding
		err := eachFinding(list, tc.presentOnly, func(f summaryFinding) { got = append(got, f) })
		if err != nil || fmt.Sprint(got) != tc.want {
			t.Errorf("presentOnly %v: %v, %v; want %s", tc.presentOnly, got, err, tc.want)
		}
	}
}

func TestIncreasing(t *testing.T) {
	tests := []struct {
		ids  []string
		want bool
	}{
		{nil, true},
		{[]string{"a"}, true},
		{[]string{"a", "b", "c"}, true},
		{[]string{"a", "a"}, false},
		{[]string{"b", "a"}, false},
	}
	for _, tt := range tests {
		if got := increasing(tt.ids); got != tt.want {
			t.Errorf("%v: %v", tt.ids, got)
		}
	}
}

// TestSummaryPackedUpgrade opens a store of schema 9, whose summary has no
// packed value: the rows it held are packed, and the triggers of 0006 keep
// the table made again current.
func TestSummaryPackedUpgrade(t *testing.T) {
	st := openOld(t, 9,
		`INSERT INTO traces (id, file, format, source, model, step_count, detected_with) VALUES ('old', '/f', 'codex', 'x', 'm:1,2', 0, 'r9:a,b')`,
		`INSERT INTO traces (id, file, format, source, model, step_count) VALUES ('new', '/f', 'codex', 'x', '', 0)`,
		`INSERT INTO findings (trace_id, source, mode, verdict, steps) VALUES ('old', 'detector', 'FM-1.3', 'present', '[0]')`)
	if got, want := summaryDump(t, st.db, true), summaryDump(t, st.db, false); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the upgrade the summary says\n%v\nand a recount\n%v", got, want)
	}
	if _, err := st.db.Exec(`INSERT INTO findings (trace_id, source, mode, verdict) VALUES ('old', 'judge:x', 'FM-2.1', 'absent')`); err != nil {
		t.Fatal(err)
	}
	got, want := summaryDump(t, st.db, true), summaryDump(t, st.db, false)
	if !reflect.DeepEqual(got, want) || len(got) != 4 {
		t.Fatalf("a finding stored after the upgrade: the summary says\n%v\nand a recount\n%v", got, want)
	}
}

func TestSummaryDetectedWith(t *testing.T) {
	sets := []string{"", "r1:a,b"}
	for _, tc := range []struct {
		set, want string
		ok        bool
	}{{"", "", true}, {"1", "r1:a,b", true}, {"2", "", false}, {"-1", "", false}, {"x", "", false}} {
		got, err := summaryRow{detectorSet: tc.set}.detectedWith(sets)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("set %q: %q, %v", tc.set, got, err)
		}
	}
}
