package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

// TestLargeAndOddSteps stores what PostgreSQL's text and tsvector types
// limit: a NUL, a step of megabytes, a word repeated past the positions a
// lexeme keeps, a word longer than a lexeme may be, more distinct words
// than a vector holds.
func TestLargeAndOddSteps(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	defer st.Close()
	tr := &trace.Trace{ID: "big", Format: "codex"}
	tr.Append(trace.Step{Kind: trace.KindMessage, Text: "before\x00after"})
	tr.Append(trace.Step{Kind: trace.KindToolResult, Text: strings.Repeat("lorem ipsum dolor ", 200_000) + " needle"})
	tr.Append(trace.Step{Kind: trace.KindMessage, Text: strings.Repeat("x", 5000) + " tail"})
	var distinct strings.Builder
	for i := range 200_000 {
		fmt.Fprintf(&distinct, "word%d ", i)
	}
	tr.Append(trace.Step{Kind: trace.KindToolResult, Text: distinct.String()})
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
	for search, want := range map[string]int{"after": 1, "ipsum": 1, "tail": 1, "word0": 1, "word199999": 0} {
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

// TestLZ4 checks that long values are stored compressed with lz4 where the
// server has it (see preferLZ4).
func TestLZ4(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	defer st.Close()
	var hasLZ4 bool
	if err := st.db.QueryRowContext(ctx, `SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'`).Scan(&hasLZ4); err != nil || !hasLZ4 {
		t.Skipf("the server has no lz4 (%v)", err)
	}
	tr := &trace.Trace{ID: "long", Format: "codex"}
	tr.Append(trace.Step{Kind: trace.KindToolResult, Text: strings.Repeat("lorem ipsum dolor ", 10_000)})
	if _, err := ingest.StoreFile(ctx, st, ingest.FileInfo{Path: "/long", Hash: "h"}, tr); err != nil {
		t.Fatal(err)
	}
	var method string
	if err := st.db.QueryRowContext(ctx, `SELECT pg_column_compression(text) FROM steps WHERE trace_id = 'long'`).Scan(&method); err != nil {
		t.Fatal(err)
	}
	if method != "lz4" {
		t.Errorf("a long step's text is compressed with %q, want lz4", method)
	}
}
