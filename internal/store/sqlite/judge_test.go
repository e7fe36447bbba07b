package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/faultline/faultline/internal/judge"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

func TestJudgeRecordsFindingsAndCache(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	ingestFile(t, st, "/a.jsonl", "h1", sample("t1", "m", nil), sample("t2", "m", nil))
	cost := 0.25
	rec := store.JudgeRecord{Trace: "t1", Source: "judge:m", PromptVersion: "p1-abc", Status: judge.StatusOK, Windows: 3, Samples: 3,
		Agreement: map[string]float64{"FM-1.3": 2.0 / 3}, Summary: "It looked.", TaskSuccess: "failure", Calls: 9,
		InputTokens: 9000, OutputTokens: 900, Cost: &cost, JudgedAt: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
	findings := []trace.Finding{
		{Mode: "FM-1.3", Source: "judge:m", Verdict: trace.Present, Steps: []int{1}, Quote: `"cmd":"ls"`, Confidence: 0.8, Explanation: "x", Taxonomy: "mast-v3"},
		{Mode: "FM-2.3", Source: "judge:m", Verdict: trace.Absent, Confidence: 0.9, Taxonomy: "mast-v3"},
	}
	if err := st.PutJudgement(ctx, rec, findings); err != nil {
		t.Fatal(err)
	}
	got, err := st.JudgeRecords(ctx, "judge:m", []string{"t1", "t2"})
	if err != nil {
		t.Fatal(err)
	}
	r, ok := got["t1"]
	if !ok || len(got) != 1 || r.Windows != 3 || r.Agreement["FM-1.3"] != 2.0/3 || *r.Cost != 0.25 || !r.JudgedAt.Equal(rec.JudgedAt) || r.Summary != "It looked." {
		t.Errorf("records %+v", got)
	}
	if other, _ := st.JudgeRecords(ctx, "judge:other", []string{"t1"}); len(other) != 0 {
		t.Errorf("another source's records: %+v", other)
	}
	all, _ := st.Findings(ctx, "t1")
	if len(all) != 3 { // the bundled mad finding and the judge's two
		t.Fatalf("%d findings", len(all))
	}
	// A failure replaces the judgement: no findings of the source remain.
	rec.Status, rec.Error, rec.Cost = judge.StatusFailed, "answer rejected", nil
	if err := st.PutJudgement(ctx, rec, nil); err != nil {
		t.Fatal(err)
	}
	got, _ = st.JudgeRecords(ctx, "judge:m", []string{"t1"})
	all, _ = st.Findings(ctx, "t1")
	if got["t1"].Status != judge.StatusFailed || got["t1"].Cost != nil || len(all) != 1 || all[0].Source != "mad:annotator_1" {
		t.Errorf("after failure: %+v, findings %+v", got["t1"], all)
	}
	// Re-ingesting a changed file drops the traces' judge records with them.
	ingestFile(t, st, "/a.jsonl", "h2", sample("t1", "m", nil))
	if got, _ := st.JudgeRecords(ctx, "judge:m", []string{"t1"}); len(got) != 0 {
		t.Errorf("records survived re-ingest: %+v", got)
	}

	if e, err := st.CachedAnswer(ctx, "k1"); e != nil || err != nil {
		t.Fatalf("empty cache: %v %v", e, err)
	}
	for _, content := range []string{"first", "second"} {
		if err := st.PutCachedAnswer(ctx, store.CacheEntry{Key: "k1", Model: "m", Content: content, InputTokens: 10, OutputTokens: 2}); err != nil {
			t.Fatal(err)
		}
	}
	if e, err := st.CachedAnswer(ctx, "k1"); err != nil || e.Content != "second" || e.InputTokens != 10 || e.Model != "m" {
		t.Errorf("cache entry %+v %v", e, err)
	}
}
