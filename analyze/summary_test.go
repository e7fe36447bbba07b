package analyze

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/store"
	"github.com/faultline/faultline/trace"
)

func TestSummarize(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	yes, no := true, false
	mk := func(id, model, system string, success *bool, findings ...trace.Finding) *trace.Trace {
		tr := &trace.Trace{ID: id, Format: "codex", Model: model, System: system}
		tr.Append(trace.Step{Kind: trace.KindMessage, Text: "x"})
		tr.Findings = findings
		if success != nil {
			tr.Outcomes = []trace.Outcome{{Source: "labels", Success: success}}
		}
		return tr
	}
	det := func(mode string) trace.Finding {
		return trace.Finding{Mode: mode, Source: "detector", Verdict: trace.Present}
	}
	human := func(mode string, v trace.Verdict) trace.Finding {
		return trace.Finding{Mode: mode, Source: "human:ann", Verdict: v}
	}
	fs, _ := st.File(ctx, ingest.FileInfo{Path: "/f", Hash: "h"})
	for _, tr := range []*trace.Trace{
		mk("a", "m1", "s1", &yes, det("FM-1.3")),
		mk("b", "m1", "s2", &no, det("FM-1.3"), det("FM-1.5"), human("FM-3.3", trace.Present)),
		mk("c", "m2", "s2", nil, human("FM-1.3", trace.Absent)),
		mk("d", "", "s1", &no),
	} {
		fs.Trace(ctx, tr)
	}
	fs.Close(ctx, ingest.FileResult{})
	traces, err := st.List(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}

	sum, err := Summarize(ctx, st, traces, "model", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Groups) != 3 || sum.Groups[0].Name != "(unknown)" || sum.Groups[1].Name != "m1" {
		t.Fatalf("groups = %+v", sum.Groups)
	}
	m1 := sum.Groups[1]
	if m1.Traces != 2 || m1.Succeeded != 1 || m1.Failed != 1 || m1.WithModes != 2 || m1.Modes["FM-1.3"] != 2 || m1.Modes["FM-3.3"] != 1 {
		t.Errorf("m1 = %+v", m1)
	}
	if tot := sum.Total; tot.Traces != 4 || tot.Unscored != 1 || tot.Failed != 2 || tot.Modes["FM-1.3"] != 2 {
		t.Errorf("total = %+v", tot)
	}
	if ModesSeen := sum.ModesSeen(); len(ModesSeen) != 3 || ModesSeen[0] != "FM-1.3" || ModesSeen[2] != "FM-3.3" {
		t.Errorf("modes seen = %v", ModesSeen)
	}

	// Only the human source, grouped by system: absent verdicts count for nothing.
	sum, err = Summarize(ctx, st, traces, "system", []string{"human"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Sources) != 1 || sum.Sources[0] != "human:ann" || sum.Total.Modes["FM-1.3"] != 0 || sum.Total.Modes["FM-3.3"] != 1 {
		t.Errorf("human only: %+v", sum)
	}
	if _, err := Summarize(ctx, st, traces, "colour", nil); err == nil {
		t.Error("unknown grouping accepted")
	}
}
