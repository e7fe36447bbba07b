package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

func open(t *testing.T) *Store {
	t.Helper()
	st, err := Open(context.Background(), filepath.Join(t.TempDir(), "sub", "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func sample(id, model string, success *bool) *trace.Trace {
	tr := &trace.Trace{ID: id, Format: "codex", Source: "x.jsonl", Model: model, Task: "Find it", Meta: map[string]string{"k": "v"}}
	tr.Append(trace.Step{Kind: trace.KindMessage, Role: "user", Text: "go"})
	tr.Append(trace.Step{Kind: trace.KindToolCall, Role: "assistant", Tool: "shell", Args: `{"cmd":"ls"}`, CallID: "c1"})
	exit := 2
	tr.Append(trace.Step{Kind: trace.KindToolResult, Role: "tool", Text: "boom", CallID: "c1", ExitCode: &exit, IsError: true})
	tr.Link()
	tr.Findings = []trace.Finding{{Mode: "FM-1.3", Source: "mad:annotator_1", Verdict: trace.Present, Steps: []int{1}, Quote: "ls"}}
	if success != nil {
		tr.Outcomes = []trace.Outcome{{Source: "labels", Success: success}}
	}
	return tr
}

// ingestFile stores traces as if they came from one file.
func ingestFile(t *testing.T, st *Store, path, hash string, traces ...*trace.Trace) bool {
	t.Helper()
	ctx := context.Background()
	stored, err := ingest.StoreFile(ctx, st, ingest.FileInfo{Path: path, Hash: hash, Format: "codex"}, traces...)
	if err != nil {
		t.Fatal(err)
	}
	return stored
}

func TestRoundTrip(t *testing.T) {
	st := open(t)
	ctx := context.Background()
	yes := true
	want := sample("a", "m1", &yes)
	ingestFile(t, st, "/f1", "h1", want)
	got, err := st.Load(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Model != "m1" || got.Task != "Find it" || got.Meta["k"] != "v" || len(got.Steps) != 3 {
		t.Fatalf("got %+v", got)
	}
	res := got.Steps[2]
	if res.Pair == nil || *res.Pair != 1 || res.ExitCode == nil || *res.ExitCode != 2 || !res.IsError || res.Tool != "shell" {
		t.Errorf("result step = %+v", res)
	}
	if p := got.Validate(); len(p) > 0 {
		t.Errorf("loaded trace invalid: %v", p)
	}
	if len(got.Findings) != 1 || got.Findings[0].Quote != "ls" || got.Findings[0].Steps[0] != 1 {
		t.Errorf("findings = %+v", got.Findings)
	}
	if o := trace.PrimaryOutcome(got.Outcomes); o == nil || !*o.Success {
		t.Errorf("outcomes = %+v", got.Outcomes)
	}
}

func TestReingestIsIdempotentAndChangedFileReplaces(t *testing.T) {
	st := open(t)
	ctx := context.Background()
	if !ingestFile(t, st, "/f1", "h1", sample("a", "m", nil), sample("b", "m", nil)) {
		t.Fatal("first ingest skipped")
	}
	if ingestFile(t, st, "/f1", "h1", sample("a", "m", nil)) {
		t.Fatal("unchanged file ingested again")
	}
	// The file changed and now holds only trace c.
	ingestFile(t, st, "/f1", "h2", sample("c", "m", nil))
	list, err := st.List(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "c" {
		t.Fatalf("after change: %+v", list)
	}
	if _, err := st.Load(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("trace a should be gone, got %v", err)
	}
}

// withSteps is a trace of n messages.
func withSteps(id string, n int) *trace.Trace {
	tr := &trace.Trace{ID: id, Format: "codex", Source: "x.jsonl"}
	for i := range n {
		tr.Append(trace.Step{Kind: trace.KindMessage, Role: "user", Text: fmt.Sprint("step ", i)})
	}
	return tr
}

// A trace stored with 3 steps from /full meets a version of it, beside
// another trace, in a second file: one of fewer steps is refused unless
// ReplaceFewerSteps allows it, and the second file's other trace is stored
// either way.
func TestFewerStepsAreRefused(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		file      string // the second file; /full is the first changed
		steps     int    // the second file's steps of trace a
		replace   bool
		refused   string // the refusal's text, "" when a is stored
		wantSteps int
		wantFrom  string // the file trace a is stored from afterwards
	}{
		{"a truncated copy", "/copy", 1, false,
			"trace a: 3 steps are stored (from /full); this file has 1; not replaced, since that would lose 2 steps (a truncated copy?)", 3, "/full"},
		{"the file cut short", "/full", 1, false,
			"trace a: 3 steps are stored (from an earlier version of this file); this file has 1; not replaced, since that would lose 2 steps (was it cut short?)", 3, "/full"},
		{"no steps at all", "/copy", 0, false,
			"trace a: 3 steps are stored (from /full); this file has 0; not replaced, since that would lose 3 steps (a truncated copy?)", 3, "/full"},
		{"as many steps", "/copy", 3, false, "", 3, "/copy"},
		{"more steps", "/copy", 5, false, "", 5, "/copy"},
		{"the file grown", "/full", 5, false, "", 5, "/full"},
		{"a truncated copy, replacing", "/copy", 1, true, "", 1, "/copy"},
		{"the file cut short, replacing", "/full", 1, true, "", 1, "/full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := open(t)
			ingestFile(t, st, "/full", "h1", withSteps("a", 3))
			var replaced []ingest.FewerSteps
			if tt.replace {
				st.ReplaceFewerSteps(func(f ingest.FewerSteps) { replaced = append(replaced, f) })
			}
			info := ingest.FileInfo{Path: tt.file, Hash: "h2", Format: "codex"}
			took, err := ingest.StoreFile(ctx, st, info, withSteps("a", tt.steps), withSteps("b", 2))
			if !took {
				t.Fatal("the second file was skipped as unchanged")
			}
			var fewer *ingest.FewerSteps
			switch {
			case tt.refused == "" && err != nil:
				t.Fatalf("not stored: %v", err)
			case tt.refused != "" && (!errors.Is(err, ingest.ErrRefused) || !errors.As(err, &fewer)):
				t.Fatalf("err = %v, want a refusal", err)
			case fewer != nil && (fewer.Error() != tt.refused ||
				*fewer != ingest.FewerSteps{ID: "a", Stored: 3, StoredFrom: "/full", Incoming: tt.steps, File: tt.file}):
				t.Errorf("refusal %+v: %q", *fewer, fewer.Error())
			}
			a, err := st.Load(ctx, "a")
			if err != nil || len(a.Steps) != tt.wantSteps {
				t.Fatalf("trace a: %v, %d steps, want %d", err, len(a.Steps), tt.wantSteps)
			}
			if list, _ := st.List(ctx, store.Filter{Paths: []string{tt.wantFrom}}); len(list) == 0 || list[0].ID != "a" {
				t.Errorf("trace a is not stored from %s: %+v", tt.wantFrom, list)
			}
			if _, err := st.Load(ctx, "b"); err != nil {
				t.Errorf("the second file's other trace: %v", err)
			}
			wantReplaced := 0
			if tt.replace && tt.steps < 3 {
				wantReplaced = 1
			}
			if len(replaced) != wantReplaced {
				t.Errorf("told of %d replacements, want %d: %+v", len(replaced), wantReplaced, replaced)
			}
			// A file with a refused trace is read again, and refused again.
			again, err := ingest.StoreFile(ctx, st, info, withSteps("a", tt.steps), withSteps("b", 2))
			if again != (tt.refused != "") || (tt.refused != "") != errors.Is(err, ingest.ErrRefused) {
				t.Errorf("second ingest of the second file: read %v, err %v", again, err)
			}
		})
	}
}

// The step count a trace is checked against cannot change under the check:
// another writer waits while a batch of the file's traces is being written,
// and then finds the trace it stored.
func TestFewerStepsCheckHoldsAgainstAnotherWriter(t *testing.T) {
	ctx := context.Background()
	st, other := openTwice(t)

	fs, err := st.File(ctx, ingest.FileInfo{Path: "/copy", Hash: "h", Format: "codex"})
	if err != nil {
		t.Fatal(err)
	}
	// The first trace opens a batch, and with it the write lock.
	if err := fs.Trace(ctx, withSteps("b", 2)); err != nil {
		t.Fatal(err)
	}
	done := storeElsewhere(other, withSteps("a", 3))
	select {
	case err := <-done:
		t.Fatalf("another writer stored while a batch of a file's traces was open: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := fs.Trace(ctx, withSteps("a", 1)); err != nil {
		t.Fatal(err)
	}
	if err := fs.Close(ctx, ingest.FileResult{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the other writer: %v", err)
	}
	if a, err := st.Load(ctx, "a"); err != nil || len(a.Steps) != 3 {
		t.Errorf("trace a: %v, %d steps, want the other writer's 3", err, len(a.Steps))
	}
}

// Opening a file takes no lock: another writer goes ahead, and the file's
// version of a trace is then checked against what that writer stored.
func TestOpeningAFileHoldsNoLock(t *testing.T) {
	ctx := context.Background()
	st, other := openTwice(t)
	fs, err := st.File(ctx, ingest.FileInfo{Path: "/copy", Hash: "h", Format: "codex"})
	if err != nil {
		t.Fatal(err)
	}
	done := storeElsewhere(other, withSteps("a", 3))
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("another writer waited for a file that had stored nothing yet")
	}
	var fewer *ingest.FewerSteps
	if err := fs.Trace(ctx, withSteps("a", 1)); !errors.As(err, &fewer) {
		t.Fatalf("the shorter copy: %v, want a refusal", err)
	}
	if err := fs.Close(ctx, ingest.FileResult{}); err != nil {
		t.Fatal(err)
	}
	if a, err := st.Load(ctx, "a"); err != nil || len(a.Steps) != 3 {
		t.Errorf("trace a: %v, %d steps, want 3", err, len(a.Steps))
	}
}

// A trace whose insert fails is not stored at all, and says which it is;
// the file's other traces are stored, and the file is read again. A new
// trace leaves none of its rows; one failing to replace a stored version
// leaves that version as it was.
func TestFailedTraceIsNotHalfStored(t *testing.T) {
	st := open(t)
	ctx := context.Background()
	ingestFile(t, st, "/old", "h0", withSteps("sample-5", 2))
	fs, err := st.File(ctx, ingest.FileInfo{Path: "/f", Hash: "h", Format: "inspect"})
	if err != nil {
		t.Fatal(err)
	}
	// Two steps at index 1: the second insert fails.
	bad := withSteps("sample-7", 4)
	bad.Steps[2].Index = 1
	bad.Findings = []trace.Finding{{Mode: "FM-1.3", Source: "detector", Verdict: trace.Present, Steps: []int{0}}}
	badReplacement := withSteps("sample-5", 4)
	badReplacement.Steps[3].Index = 2
	if err := fs.Trace(ctx, withSteps("sample-6", 2)); err != nil {
		t.Fatal(err)
	}
	for _, tr := range []*trace.Trace{bad, badReplacement} {
		err = fs.Trace(ctx, tr)
		if err == nil || !strings.Contains(err.Error(), tr.ID) || !strings.Contains(err.Error(), "not stored") {
			t.Fatalf("failed insert of %s: %v", tr.ID, err)
		}
	}
	if err := fs.Trace(ctx, withSteps("sample-8", 2)); err != nil {
		t.Fatal(err)
	}
	if err := fs.Close(ctx, ingest.FileResult{}); err != nil {
		t.Fatal(err)
	}
	list, err := st.List(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	if !slices.Equal(ids, []string{"sample-5", "sample-6", "sample-8"}) {
		t.Errorf("stored %v, want the earlier and the two good samples only", ids)
	}
	if _, err := st.Load(ctx, "sample-7"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the failed sample: %v, want not found", err)
	}
	if kept, err := st.Load(ctx, "sample-5"); err != nil || len(kept.Steps) != 2 {
		t.Errorf("the sample a bad version failed to replace: %v, %+v", err, kept)
	}
	for _, c := range []struct {
		query string
		want  int
	}{
		{`SELECT count(*) FROM step_rows`, 6}, // two steps of each stored sample
		{`SELECT count(*) FROM trace_keys`, 3},
		{`SELECT count(*) FROM trace_summary`, 3},
		{`SELECT count(*) FROM findings`, 0},
	} {
		var n int
		if err := st.db.QueryRowContext(ctx, c.query).Scan(&n); err != nil || n != c.want {
			t.Errorf("%s: %d (%v), want %d", c.query, n, err, c.want)
		}
	}
	if hits, err := st.SearchHits(ctx, "step", []string{"sample-5", "sample-6", "sample-8"}); err != nil || len(hits) != 3 {
		t.Errorf("search found %d of the 3 stored samples (%v)", len(hits), err)
	}
	if fs, _ := st.File(ctx, ingest.FileInfo{Path: "/f", Hash: "h", Format: "inspect"}); fs == nil {
		t.Error("a file with a failed trace is recorded as ingested")
	}
}

func TestFileWithErrorsIsReadAgain(t *testing.T) {
	st := open(t)
	ctx := context.Background()
	fs, _ := st.File(ctx, ingest.FileInfo{Path: "/bad", Hash: "h", Format: "codex"})
	fs.Trace(ctx, sample("a", "m", nil))
	if err := fs.Close(ctx, ingest.FileResult{Errors: 1}); err != nil {
		t.Fatal(err)
	}
	if !ingestFile(t, st, "/bad", "h", sample("a", "m", nil)) {
		t.Error("a file that had errors was skipped as unchanged")
	}
}

func TestListFilters(t *testing.T) {
	st := open(t)
	ctx := context.Background()
	yes, no := true, false
	ingestFile(t, st, "/d/one.jsonl", "1", sample("a", "m1", &yes))
	ingestFile(t, st, "/d/two.jsonl", "2", sample("b", "m2", &no))
	ingestFile(t, st, "/e/three.jsonl", "3", sample("c", "m1", nil))
	tests := []struct {
		name string
		f    store.Filter
		want string
	}{
		{"all", store.Filter{}, "a,c,b"},
		{"model", store.Filter{Model: []string{"m1"}}, "a,c"},
		{"success", store.Filter{Outcome: "success"}, "a"},
		{"failure", store.Filter{Outcome: "failure"}, "b"},
		{"unknown", store.Filter{Outcome: "unknown"}, "c"},
		{"directory", store.Filter{Paths: []string{"/d"}}, "a,b"},
		{"directory with slash", store.Filter{Paths: []string{"/d/"}}, "a,b"},
		{"file", store.Filter{Paths: []string{"/e/three.jsonl"}}, "c"},
		{"selection by id or file", store.Filter{Select: &store.Selection{IDs: []string{"b"}, Files: []string{"/e/three.jsonl"}}}, "c,b"},
		{"empty selection", store.Filter{Select: &store.Selection{}}, ""},
		{"limit", store.Filter{Limit: 1}, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := st.List(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, s := range list {
				ids = append(ids, s.ID)
			}
			if got := join(ids); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestResolvePrefix(t *testing.T) {
	st := open(t)
	ctx := context.Background()
	ingestFile(t, st, "/f", "h", sample("abc-1", "m", nil), sample("abc-2", "m", nil), sample("xyz", "m", nil))
	if id, err := st.Resolve(ctx, "xy"); err != nil || id != "xyz" {
		t.Errorf("Resolve(xy) = %q, %v", id, err)
	}
	if _, err := st.Resolve(ctx, "abc"); err == nil {
		t.Error("ambiguous prefix resolved")
	}
	if _, err := st.Resolve(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing trace: %v", err)
	}
	if _, err := st.Resolve(ctx, "%"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("wildcard matched: %v", err)
	}
}

func TestReplaceFindings(t *testing.T) {
	st := open(t)
	ctx := context.Background()
	ingestFile(t, st, "/f", "h", sample("a", "m", nil))
	det := []trace.Finding{{Mode: "FM-1.5", Source: "detector", Detector: "d", Verdict: trace.Present, Steps: []int{0}}}
	if err := st.ReplaceFindings(ctx, "a", "detector", det, "r1"); err != nil {
		t.Fatal(err)
	}
	if err := st.ReplaceFindings(ctx, "a", "detector", det, "r1"); err != nil {
		t.Fatal(err)
	}
	// Replacing twice keeps one detector finding beside the bundled label.
	findings, err := st.Findings(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range findings {
		got = append(got, f.Source+":"+f.Mode)
	}
	if join(got) != "detector:FM-1.5,mad:annotator_1:FM-1.3" {
		t.Errorf("findings = %v", got)
	}
	with, _ := st.DetectedWith(ctx, []string{"a"})
	if with["a"] != "r1" {
		t.Errorf("detected_with = %q", with["a"])
	}
	sources, _ := st.Sources(ctx, []string{"a"})
	if join(sources) != "detector,mad:annotator_1" {
		t.Errorf("sources = %v", sources)
	}
}

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.db")
	ctx := context.Background()
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	ingestFile(t, st, "/f", "h", sample("a", "m", nil))
	st.Close()
	st, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Load(ctx, "a"); err != nil {
		t.Fatal(err)
	}
}

func join(ss []string) string { return strings.Join(ss, ",") }

// A trace read again (a changed file, an interrupted ingest, late spans)
// keeps the labels and scores added to it, drops what is of its old content
// (detector and judge findings) and takes the file's own anew.
func TestReplacedTraceKeepsWhatWasAdded(t *testing.T) {
	st := open(t)
	ctx := context.Background()
	ingestFile(t, st, "/f", "h1", sample("a", "m", nil))
	human := func(source string, step int) []trace.Finding {
		return []trace.Finding{{Mode: "FM-2.6", Source: source, Verdict: trace.Present, Steps: []int{step}, Quote: "boom"},
			{Mode: "FM-1.1", Source: source, Verdict: trace.Absent}}
	}
	for source, findings := range map[string][]trace.Finding{
		"human:ann": human("human:ann", 1),
		"human:bob": human("human:bob", 2),
		"detector":  {{Mode: "SYS-1", Source: "detector", Verdict: trace.Present, Steps: []int{2}}},
		"judge:m":   {{Mode: "FM-3.3", Source: "judge:m", Verdict: trace.Present, Steps: []int{1}}},
	} {
		if err := st.ReplaceFindings(ctx, "a", source, findings, ""); err != nil {
			t.Fatal(err)
		}
	}
	score := 0.5
	if err := st.PutOutcome(ctx, "a", trace.Outcome{Source: "itbench", Metric: "root_cause_recall", Score: &score}); err != nil {
		t.Fatal(err)
	}
	sources := func() map[string]int {
		all, err := st.Findings(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, f := range all {
			n[f.Source]++
		}
		return n
	}
	longer := sample("a", "m", nil)
	longer.Append(trace.Step{Kind: trace.KindMessage, Role: "assistant", Text: "done"})
	longer.Findings = append(longer.Findings, trace.Finding{Mode: "FM-3.2", Source: "mad:annotator_1", Verdict: trace.Present, Steps: []int{3}})
	ingestFile(t, st, "/f", "h2", longer)
	if got, want := sources(), map[string]int{"human:ann": 2, "human:bob": 2, "mad:annotator_1": 2}; !maps.Equal(got, want) {
		t.Errorf("after a longer version: findings by source %v, want %v", got, want)
	}
	got, err := st.Load(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Steps) != 4 || len(got.Outcomes) != 1 || got.Outcomes[0].Source != "itbench" || *got.Outcomes[0].Score != 0.5 {
		t.Errorf("after a longer version: %d steps, outcomes %+v", len(got.Steps), got.Outcomes)
	}

	// A shorter version, let in: a label on a step it lacks goes, the
	// others stay.
	st.ReplaceFewerSteps(func(ingest.FewerSteps) {})
	shorter := sample("a", "m", nil)
	shorter.Steps = shorter.Steps[:2]
	ingestFile(t, st, "/f", "h3", shorter)
	if got, want := sources(), map[string]int{"human:ann": 2, "human:bob": 1, "mad:annotator_1": 1}; !maps.Equal(got, want) {
		t.Errorf("after a shorter version: findings by source %v, want %v", got, want)
	}
}

// openTwice opens one database twice: two writers, as far as SQLite can
// tell two processes.
func openTwice(t *testing.T) (*Store, *Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f.db")
	var stores [2]*Store
	for i := range stores {
		st, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		stores[i] = st
	}
	return stores[0], stores[1]
}

// storeElsewhere stores t from another file through other, in the
// background, and says how that went.
func storeElsewhere(other *Store, t *trace.Trace) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := ingest.StoreFile(context.Background(), other, ingest.FileInfo{Path: "/full", Hash: "h", Format: "codex"}, t)
		done <- err
	}()
	return done
}

// A new store is made with pageSize pages; a store made with SQLite's
// default keeps it and opens as before.
func TestPageSize(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, path string)
		want    int
	}{
		{"new store", func(*testing.T, string) {}, pageSize},
		{"existing store of 4 KiB pages", func(t *testing.T, path string) {
			db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec("CREATE TABLE unrelated (x)"); err != nil {
				t.Fatal(err)
			}
		}, 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "faultline.db")
			tc.prepare(t, path)
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var got int
			var mode string
			if err := s.db.QueryRowContext(ctx, "PRAGMA page_size").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
				t.Fatal(err)
			}
			if got != tc.want || mode != "wal" {
				t.Errorf("page size %d, journal %s; want %d, wal", got, mode, tc.want)
			}
		})
	}
}
