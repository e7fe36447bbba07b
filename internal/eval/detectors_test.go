package eval

import (
	"context"
	"testing"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/internal/store/memory"
	"github.com/faultline/faultline/trace"
)

// Each detector is held against the labels of its mode, from the findings
// of the detectors alone, read for every labelled trace at once.
func TestAgreeDetectors(t *testing.T) {
	d := detect.AbortedTurn
	fired := func(steps ...int) trace.Finding {
		return trace.Finding{Source: detect.Source, Detector: d.Name, Mode: d.Mode, Verdict: trace.Present, Steps: steps}
	}
	st := memory.New(
		&trace.Trace{ID: "tp", Findings: []trace.Finding{fired(5), fired(2)}},
		&trace.Trace{ID: "fp", Findings: []trace.Finding{fired(1)}},
		// What is not the detectors' present finding is no firing.
		&trace.Trace{ID: "fn", Findings: []trace.Finding{
			{Source: detect.Source + ":old", Detector: d.Name, Mode: d.Mode, Verdict: trace.Present, Steps: []int{1}},
			{Source: "judge:m", Detector: d.Name, Mode: d.Mode, Verdict: trace.Present, Steps: []int{1}},
			{Source: detect.Source, Detector: d.Name, Mode: d.Mode, Verdict: trace.Absent}}},
		&trace.Trace{ID: "tn"},
		&trace.Trace{ID: "unlabelled", Findings: []trace.Finding{fired(1)}},
	)
	label := func(id string, v trace.Verdict, steps ...int) labels.ModeLabel {
		return labels.ModeLabel{Trace: id, Mode: d.Mode, Verdict: v, Steps: steps}
	}
	ref := &labels.Set{Name: "ref", Labels: []labels.ModeLabel{
		label("tp", trace.Present, 2), label("fp", trace.Absent), label("fn", trace.Present), label("tn", trace.Absent)}}
	rows, err := AgreeDetectors(context.Background(), st, Index(ref))
	if err != nil {
		t.Fatal(err)
	}
	// Every detector of the mode has a row; the others never fired.
	var got *DetectorRow
	for i := range rows {
		if rows[i].Mode != d.Mode {
			t.Errorf("a row of %s: %+v", rows[i].Mode, rows[i])
		}
		if rows[i].Detector == d.Name {
			got = &rows[i]
		} else if rows[i].TP+rows[i].FP != 0 {
			t.Errorf("%s fired: %+v", rows[i].Detector, rows[i])
		}
	}
	if got == nil {
		t.Fatalf("no row of %s in %+v", d.Name, rows)
	}
	if r := *got; r.Pairs != 4 || r.TP != 1 || r.FP != 1 || r.FN != 1 || r.TN != 1 || r.Located != 1 || r.Exact != 1 {
		t.Errorf("row %+v", r)
	}
}
