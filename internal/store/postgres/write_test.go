package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

// TestLargeAndOddSteps stores what PostgreSQL's text and tsvector types
// limit: a NUL, a step of megabytes, a word repeated past the positions a
// lexeme keeps, a word longer than a lexeme may be.
func TestLargeAndOddSteps(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	defer st.Close()
	tr := &trace.Trace{ID: "big", Format: "codex"}
	tr.Append(trace.Step{Kind: trace.KindMessage, Text: "before\x00after"})
	tr.Append(trace.Step{Kind: trace.KindToolResult, Text: strings.Repeat("lorem ipsum dolor ", 200_000) + " needle"})
	tr.Append(trace.Step{Kind: trace.KindMessage, Text: strings.Repeat("x", 5000) + " tail"})
	if _, err := ingest.StoreFile(ctx, st, ingest.FileInfo{Path: "/big", Hash: "h"}, tr); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	if got.Steps[0].Text != "before\uFFFDafter" || len(got.Steps[1].Text) != len(tr.Steps[1].Text) {
		t.Errorf("stored steps differ: %q, %d bytes", got.Steps[0].Text, len(got.Steps[1].Text))
	}
	for search, want := range map[string]int{"after": 1, "ipsum": 1, "tail": 1} {
		hits, err := st.SearchHits(ctx, search, []string{"big"})
		if err != nil || hits["big"].Count != want {
			t.Errorf("SearchHits(%s) = %v, %v", search, hits, err)
		}
	}
}

// TestConcurrentWriters stores one trace from several files at once, as
// two ingests or an ingest and the receiver may: each write replaces the
// one before, and none fails.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	defer st.Close()
	errs := make(chan error, 6)
	for i := range 6 {
		go func() {
			tr := &trace.Trace{ID: "shared", Format: "codex"}
			for range 20 {
				tr.Append(trace.Step{Kind: trace.KindMessage, Text: "step"})
			}
			_, err := ingest.StoreFile(ctx, st, ingest.FileInfo{Path: "/f" + string(rune('a'+i)), Hash: "h"}, tr)
			errs <- err
		}()
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if _, n, err := st.LoadHeader(ctx, "shared"); err != nil || n != 20 {
		t.Errorf("LoadHeader = %d steps, %v", n, err)
	}
}

// TestConcurrentReplaceFindings replaces one source's findings on a trace
// from several writers at once: the last write wins whole, never a mix.
func TestConcurrentReplaceFindings(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	defer st.Close()
	tr := &trace.Trace{ID: "t", Format: "codex"}
	tr.Append(trace.Step{Kind: trace.KindMessage, Text: "x"})
	if _, err := ingest.StoreFile(ctx, st, ingest.FileInfo{Path: "/f", Hash: "h"}, tr); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			fs := []trace.Finding{{Source: "human:a", Mode: "FM-1.1", Verdict: trace.Present}, {Source: "human:a", Mode: "FM-1.2", Verdict: trace.Absent}}
			errs <- st.ReplaceFindings(ctx, "t", "human:a", fs, "")
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if fs, err := st.Findings(ctx, "t"); err != nil || len(fs) != 2 {
		t.Errorf("after concurrent replacements: %d findings, %v; want 2", len(fs), err)
	}
}
