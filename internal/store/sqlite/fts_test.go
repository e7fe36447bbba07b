package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

func TestSearchQuery(t *testing.T) {
	tests := []struct{ in, want string }{
		{"kubectl get", `"kubectl" "get"`},
		{`"get pods" -n`, `"get pods" "-n"`},
		{"agent_output.json", `"agent_output.json"`},
		{"kube*", `"kube"*`},
		{`say "hi`, `"say" "hi"`},
		{`NEAR(a b) OR text:x`, `"NEAR(a" "b)" "OR" "text:x"`},
		{`a"b`, `"a""b"`},
	}
	for _, tc := range tests {
		got, err := SearchQuery(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("SearchQuery(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, empty := range []string{"", "  ", `"" -- **`} {
		if _, err := SearchQuery(empty); !errors.Is(err, store.ErrEmptySearch) {
			t.Errorf("SearchQuery(%q): %v", empty, err)
		}
	}
}

// Whatever a person types, the query it makes is valid FTS5.
func FuzzSearchQuery(f *testing.F) {
	for _, s := range []string{"a b", `"x`, "x*", `a"b"c`, "NEAR(x y, 2)", "col:x", "^x", "-x + y", "ÀÉ 東京", "0\x00"} {
		f.Add(s)
	}
	st, err := Open(context.Background(), filepath.Join(f.TempDir(), "f.db"))
	if err != nil {
		f.Fatal(err)
	}
	defer st.Close()
	f.Fuzz(func(t *testing.T, s string) {
		q, err := SearchQuery(s)
		if err != nil {
			return
		}
		if _, err := st.db.Exec(`SELECT rowid FROM steps_fts WHERE steps_fts MATCH ?`, q); err != nil {
			t.Errorf("SearchQuery(%q) = %q: %v", s, q, err)
		}
	})
}

// The index merges its segments at sixteen of a size (migration 0009), not
// FTS5's four.
func TestSearchIndexMerge(t *testing.T) {
	var automerge int
	if err := open(t).db.QueryRow(`SELECT v FROM steps_fts_config WHERE k = 'automerge'`).Scan(&automerge); err != nil || automerge != 16 {
		t.Errorf("automerge = %d, %v; want 16", automerge, err)
	}
}

func TestSearchFollowsReplacement(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	mk := func(id, text string) *trace.Trace {
		tr := &trace.Trace{ID: id, Format: "codex", Source: "x"}
		tr.Append(trace.Step{Kind: trace.KindMessage, Text: "hello"})
		tr.Append(trace.Step{Kind: trace.KindToolCall, Tool: "shell", Args: `{"cmd": "kubectl get pods"}`})
		tr.Append(trace.Step{Kind: trace.KindToolResult, Text: text})
		return tr
	}
	ingestFile(t, st, "/a", "1", mk("a", "CrashLoopBackOff in checkout"), mk("b", "all running"))
	ingestFile(t, st, "/c", "1", mk("c", "nothing"))
	found := func(search string) string {
		t.Helper()
		got, err := st.IDs(ctx, store.TraceQuery{Search: search})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(got)
	}
	if got := found("crashloopbackoff"); got != "[a]" {
		t.Errorf("before: %s", got)
	}
	if got := found("kubectl pods"); got != "[a b c]" {
		t.Errorf("arguments: %s", got)
	}
	hits, err := st.SearchHits(ctx, "kubectl", []string{"a", "c", "nope"})
	if err != nil || !reflect.DeepEqual(hits, map[string]store.SearchHit{"a": {Steps: []int{1}, Count: 1}, "c": {Steps: []int{1}, Count: 1}}) {
		t.Errorf("hits %v, %v", hits, err)
	}
	// The file changes: its traces are replaced, and so is what the index holds.
	ingestFile(t, st, "/a", "2", mk("a", "OOMKilled"))
	if got := found("crashloopbackoff"); got != "[]" {
		t.Errorf("after replacing a: %s", got)
	}
	if got := found("oomkilled"); got != "[a]" {
		t.Errorf("after replacing a: %s", got)
	}
	if got := found("running"); got != "[]" {
		t.Errorf("b is gone with its file's old version: %s", got)
	}
	if got := found("nothing"); got != "[c]" {
		t.Errorf("another file's trace: %s", got)
	}
	var rows int
	if err := st.db.QueryRow(`SELECT COUNT(*) FROM trace_keys`).Scan(&rows); err != nil || rows != 2 {
		t.Errorf("%d trace keys, %v", rows, err)
	}
}

// A database made before the search index gets one on opening, holding
// the steps already stored.
func TestSearchBackfill(t *testing.T) {
	ctx := context.Background()
	st := openOld(t, 3,
		`INSERT INTO traces (id, file, format, source, step_count) VALUES ('old', '/f', 'codex', 'x', 2)`,
		`INSERT INTO steps (trace_id, idx, kind, text) VALUES ('old', 0, 'message', 'hello'), ('old', 1, 'tool_result', 'ImagePullBackOff')`)
	hits, err := st.SearchHits(ctx, "imagepullbackoff", []string{"old"})
	if err != nil || hits["old"].Count != 1 || hits["old"].Steps[0] != 1 {
		t.Errorf("hits %v, %v", hits, err)
	}
	// The steps moved to step_rows (migration 0007) as they were.
	tr, err := st.Load(ctx, "old")
	if err != nil || len(tr.Steps) != 2 || tr.Steps[1].Index != 1 || tr.Steps[1].Text != "ImagePullBackOff" {
		t.Errorf("steps after the migrations: %+v, %v", tr, err)
	}
}
