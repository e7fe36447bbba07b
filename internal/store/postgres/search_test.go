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
