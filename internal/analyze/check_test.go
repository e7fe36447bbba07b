package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	ctx := context.Background()
	base, err := BuildReport(ctx, buildStore(t, testCohort()), ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Round-trip the baseline through its JSON form, as check reads it.
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(base); err != nil {
		t.Fatal(err)
	}
	saved, err := ReadReport(&buf)
	if err != nil {
		t.Fatal(err)
	}

	// Against itself nothing rises.
	res, err := Check(saved, base, Limits{Prevalence: 0, Density: 0})
	if err != nil || res.Regressions() != 0 || len(res.Rises) != 0 || res.Checked == 0 {
		t.Fatalf("same cohort: %+v, %v", res, err)
	}

	// m1's successes catch FM-3.3 as well: its share in m1 and in all rises,
	// and a new model appears.
	specs := testCohort()
	for i := range specs {
		if strings.HasPrefix(specs[i].id, "m1-s") {
			specs[i].modes["FM-3.3"] = 1
		}
	}
	specs = append(specs, cohortSpec{id: "m3-f0", model: "m3", success: no, modes: map[string]int{"FM-2.2": 0}})
	now, err := BuildReport(ctx, buildStore(t, specs), ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err = Check(saved, now, Limits{Prevalence: 0.3, Density: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	// m1: FM-3.3 6/12 → 12/12 (+50 points, past 30); density unchanged.
	// all: FM-3.3 7/16 → 13/17 (+33 points, past 30), FM-2.2 0 → 1/17.
	if res.Regressions() != 2 || res.Rises[0].Group != "m1" || res.Rises[0].Measure != "FM-3.3" || !res.Rises[0].Regression ||
		*res.Rises[0].BaselineCount != (Proportion{6, 12}) || *res.Rises[0].CurrentCount != (Proportion{12, 12}) {
		t.Errorf("rises = %+v", res.Rises)
	}
	if len(res.New) != 1 || res.New[0] != "m3" || len(res.Missing) != 0 {
		t.Errorf("new %v, missing %v", res.New, res.Missing)
	}
	res, _ = Check(saved, now, Limits{Prevalence: 0.5, Density: 0.25})
	if res.Regressions() != 0 || len(res.Rises) == 0 {
		t.Errorf("looser limit: %+v", res)
	}

	other, _ := BuildReport(ctx, buildStore(t, testCohort()), ReportOptions{By: "system"})
	if _, err := Check(saved, other, Limits{}); err == nil || !strings.Contains(err.Error(), "groups by model") {
		t.Errorf("another grouping: %v", err)
	}
	judged, _ := BuildReport(ctx, buildStore(t, testCohort()), ReportOptions{Sources: []string{"judge"}})
	if _, err := Check(saved, judged, Limits{}); err == nil {
		t.Error("another source selection accepted")
	}
}

func TestReadReport(t *testing.T) {
	wrapped := `{"ingest": {}, "report": {"schema": "` + ReportSchema + `", "by": "model", "groups": [], "all": {"name": "all", "traces": 3}}}`
	r, err := ReadReport(strings.NewReader(wrapped))
	if err != nil || r.All.Traces != 3 {
		t.Errorf("analyze --json form: %+v, %v", r, err)
	}
	for doc, want := range map[string]string{
		`{"schema": "faultline-report/2", "all": {}}`: `report schema "faultline-report/2"`,
		`{"traces": 3}`:                      `no "schema" field`,
		`{"schema": "` + ReportSchema + `"}`: `no "all" group`,
		`[1, 2]`:                             "not a faultline report",
	} {
		if _, err := ReadReport(strings.NewReader(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", doc, err, want)
		}
	}
}
