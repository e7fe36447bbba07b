package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// TestPutJudgementTx stores a judgement only when the caller's transaction
// commits: rolled back, neither the record nor the findings are there.
func TestPutJudgementTx(t *testing.T) {
	ctx := context.Background()
	st, cohort := withCohort(t)
	id := cohort[0].ID
	rec := store.JudgeRecord{Trace: id, Source: "judge:m", PromptVersion: "p1", Samples: 1, Status: "ok", Windows: 1, JudgedAt: time.Now().UTC()}
	findings := []trace.Finding{{Mode: "FM-1.1", Source: "judge:m", Verdict: trace.Present, Steps: []int{0}, Confidence: 0.9}}
	for _, tc := range []struct {
		name   string
		commit bool
	}{{"rolled back", false}, {"committed", true}} {
		t.Run(tc.name, func(t *testing.T) {
			tx, err := st.DB().BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.PutJudgementTx(ctx, tx, rec, findings); err != nil {
				t.Fatal(err)
			}
			if tc.commit {
				err = tx.Commit()
			} else {
				err = tx.Rollback()
			}
			if err != nil {
				t.Fatal(err)
			}
			records, err := st.JudgeRecords(ctx, "judge:m", []string{id})
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.Findings(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, f := range got {
				if f.Source == "judge:m" {
					n++
				}
			}
			if _, ok := records[id]; ok != tc.commit || (n == 1) != tc.commit {
				t.Errorf("after the transaction was %s: record stored %v, %d findings", tc.name, ok, n)
			}
		})
	}
}
