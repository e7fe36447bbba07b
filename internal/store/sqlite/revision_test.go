package sqlite

import (
	"context"
	"testing"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// The revision moves with every write, this Store's or another process's,
// and stays put while the database is only read.
func TestRevision(t *testing.T) {
	ctx := context.Background()
	st, other := openTwice(t)
	last, _ := st.Revision(ctx)
	step := func(what string, write func() error, moves bool) {
		t.Helper()
		if err := write(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		now, err := st.Revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if (now != last) != moves {
			t.Errorf("%s: revision %s → %s", what, last, now)
		}
		last = now
	}
	yes := true
	step("a read", func() error { _, err := st.List(ctx, store.Filter{}); return err }, false)
	step("an ingest", func() error { ingestFile(t, st, "/f", "h", sample("a", "m", nil)); return nil }, true)
	step("the same file again", func() error { ingestFile(t, st, "/f", "h", sample("a", "m", nil)); return nil }, false)
	step("an outcome", func() error { return st.PutOutcome(ctx, "a", trace.Outcome{Source: "labels", Success: &yes}) }, true)
	step("labels", func() error {
		return st.ReplaceFindings(ctx, "a", "human:x", []trace.Finding{{Mode: "FM-1.3", Source: "human:x", Verdict: trace.Absent}}, "")
	}, true)
	step("a judgement", func() error {
		return st.PutJudgement(ctx, store.JudgeRecord{Trace: "a", Source: "judge:m", Status: "ok"}, nil)
	}, true)
	step("another process's ingest", func() error { ingestFile(t, other, "/g", "h", sample("b", "m", nil)); return nil }, true)
	step("another read", func() error { _, err := st.Load(ctx, "b"); return err }, false)
}
