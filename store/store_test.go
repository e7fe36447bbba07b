package store

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/ingest"
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
	list, err := st.List(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != "c" {
		t.Fatalf("after change: %+v", list)
	}
	if _, err := st.Load(ctx, "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("trace a should be gone, got %v", err)
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
		f    Filter
		want string
	}{
		{"all", Filter{}, "a,c,b"},
		{"model", Filter{Model: "m1"}, "a,c"},
		{"success", Filter{Outcome: "success"}, "a"},
		{"failure", Filter{Outcome: "failure"}, "b"},
		{"unknown", Filter{Outcome: "unknown"}, "c"},
		{"directory", Filter{Paths: []string{"/d"}}, "a,b"},
		{"directory with slash", Filter{Paths: []string{"/d/"}}, "a,b"},
		{"file", Filter{Paths: []string{"/e/three.jsonl"}}, "c"},
		{"selection by id or file", Filter{Select: &Selection{IDs: []string{"b"}, Files: []string{"/e/three.jsonl"}}}, "c,b"},
		{"empty selection", Filter{Select: &Selection{}}, ""},
		{"limit", Filter{Limit: 1}, "a"},
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
	if _, err := st.Resolve(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing trace: %v", err)
	}
	if _, err := st.Resolve(ctx, "%"); !errors.Is(err, ErrNotFound) {
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
