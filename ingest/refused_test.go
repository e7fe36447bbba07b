package ingest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

// pickySink refuses the traces it is told to, fails on others, and notes
// what it took and how each file ended.
type pickySink struct {
	refuse, fail map[string]bool
	took         []string
	results      []FileResult
}

func (p *pickySink) File(context.Context, FileInfo) (FileSink, error) { return p, nil }

func (p *pickySink) Trace(_ context.Context, t *trace.Trace) error {
	switch {
	case p.refuse[t.ID]:
		return fmt.Errorf("keeping %s: %w", t.ID, ErrRefused)
	case p.fail[t.ID]:
		return fmt.Errorf("disk full at %s", t.ID)
	}
	p.took = append(p.took, t.ID)
	return nil
}

func (p *pickySink) Close(_ context.Context, r FileResult) error {
	p.results = append(p.results, r)
	return nil
}

func set(ids ...string) map[string]bool {
	m := map[string]bool{}
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// A refused trace does not stop the rest of its file; any other error does.
func TestStoreFileGoesOnPastARefusal(t *testing.T) {
	tests := []struct {
		name         string
		refuse, fail map[string]bool
		wantTook     string
		wantErr      string // "" for none
		wantRefused  bool   // the error matches ErrRefused
		wantErrors   int    // FileResult.Errors the file was closed with
		wantStopped  bool   // FileResult.Err set
	}{
		{"none refused", nil, nil, "a,b,c", "", false, 0, false},
		{"one refused", set("b"), nil, "a,c", "keeping b: trace refused", true, 1, false},
		{"two refused", set("a", "c"), nil, "b", "keeping a: trace refused\nkeeping c: trace refused", true, 2, false},
		{"a failure stops the file", nil, set("b"), "a", "disk full at b", false, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &pickySink{refuse: tt.refuse, fail: tt.fail}
			var traces []*trace.Trace
			for _, id := range []string{"a", "b", "c"} {
				traces = append(traces, &trace.Trace{ID: id})
			}
			took, err := StoreFile(context.Background(), sink, FileInfo{Path: "/f"}, traces...)
			if took == tt.wantStopped {
				t.Errorf("took the file: %v", took)
			}
			if got := strings.Join(sink.took, ","); got != tt.wantTook {
				t.Errorf("took %s, want %s", got, tt.wantTook)
			}
			if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) || errors.Is(err, ErrRefused) != tt.wantRefused {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
			if len(sink.results) != 1 || sink.results[0].Errors != tt.wantErrors || (sink.results[0].Err != nil) != tt.wantStopped {
				t.Errorf("closed with %+v", sink.results)
			}
		})
	}
}

// Paths reports a refused trace as an error of its file, counts it, and
// goes on with the file's other traces and the other files.
func TestPathsReportsARefusal(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "one.jsonl", `{"messages":[{"role":"user","content":"hi"}]}`+"\n"+`{"messages":[{"role":"user","content":"again"}]}`+"\n")
	write(t, dir, "two.jsonl", `{"messages":[{"role":"user","content":"more"}]}`+"\n")
	all, _, err := ReadAll(context.Background(), []string{dir}, Options{})
	if err != nil || len(all) != 3 {
		t.Fatalf("read %d traces: %v", len(all), err)
	}
	refused := all[0].ID
	sink := &pickySink{refuse: set(refused)}
	var issues []Issue
	sum, err := Paths(context.Background(), []string{dir}, sink, Options{Report: func(i Issue) { issues = append(issues, i) }})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Files != 2 || sum.Traces != 2 || sum.Refused != 1 || sum.Errors != 1 || len(sink.took) != 2 {
		t.Errorf("summary %+v, took %v", sum, sink.took)
	}
	want := Issue{Path: filepath.Join(dir, "one.jsonl"), Severity: Error, Message: "keeping " + refused + ": trace refused"}
	if len(issues) != 1 || issues[0] != want {
		t.Errorf("issues %+v, want %+v", issues, want)
	}
	if len(sink.results) != 2 || sink.results[0].Errors != 1 || sink.results[1].Errors != 0 {
		t.Errorf("files closed with %+v", sink.results)
	}
}
