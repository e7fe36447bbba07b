package rules

import (
	"fmt"
	"testing"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/trace"
)

func TestFindingsTaxonomy(t *testing.T) {
	s := mustParse(t, goodFile)
	tr := build(result("shell", "error: Unauthorized", 1))
	tr.Steps = append(tr.Steps, make([]trace.Step, 200)...)
	for i := range tr.Steps {
		tr.Steps[i].Index = i
		if tr.Steps[i].Kind == "" {
			tr.Steps[i].Kind, tr.Steps[i].Text = trace.KindMessage, "filler"
		}
	}
	fs := run(t, s, tr)
	if len(fs) != 2 {
		t.Fatalf("findings %+v", fs)
	}
	byRule := map[string]trace.Finding{}
	for _, f := range fs {
		byRule[f.Detector] = f
	}
	if f := byRule["lost-access"]; f.Mode != "OPS-1" || f.Taxonomy != detect.CustomTaxonomy || f.Confidence != 0.9 || f.Quote != "Unauthorized" {
		t.Errorf("custom code finding %+v", f)
	}
	if f := byRule["long"]; f.Mode != "FM-1.5" || f.Taxonomy == "" || f.Taxonomy == detect.CustomTaxonomy || f.Confidence != 0.8 {
		t.Errorf("MAST finding %+v", f)
	}
}

func TestSummaryFirst(t *testing.T) {
	for _, tt := range []struct{ doc, summary string }{
		{"One sentence.", "One sentence."},
		{"First one. Then more. And more.", "First one."},
		{"First line\nsecond. line", "First line"},
		{"  Padded. Rest.  ", "Padded."},
		{"Version 1.2 is odd. Rest.", "Version 1.2 is odd."},
	} {
		d := &detect.Detector{Doc: summaryFirst(tt.doc)}
		if got := d.Summary(); got != tt.summary {
			t.Errorf("%q: summary %q, want %q", tt.doc, got, tt.summary)
		}
	}
}

// TestLinear counts the work of every shape on a long trace built to be
// each one's worst case: every step matches (so every step waits for a
// follow-up, or joins a group), and matchers carry a nested not. The work
// must stay within a constant per step.
func TestLinear(t *testing.T) {
	const n = 100_000
	tr := &trace.Trace{ID: "long"}
	for i := 0; i < n; i++ {
		s := trace.Step{Kind: trace.KindToolCall, Tool: "shell", Args: fmt.Sprintf("kubectl get pod p-%d", i%7)}
		if i%5000 == 4999 {
			s.Kind, s.Tool, s.Args, s.Text = trace.KindMessage, "", "", "done"
		}
		tr.Append(s)
	}
	m := "{tool: shell, not: {args: nothing-like-this}}"
	shapes := map[string]string{
		"match":                 "match: " + m,
		"count":                 "count: {match: " + m + ", at_least: 3}",
		"repeat":                "repeat: {match: " + m + ", same: [tool, args], times: 2}",
		"repeat distinct":       "repeat: {match: {kind: tool_call}, same: [args, text], times: 2}",
		"sequence, unfollowed":  "sequence: {first: " + m + ", then: {text: never}, within: 50000}",
		"sequence, followed":    "sequence: {first: " + m + ", then: {text: done}, within: 50000}",
		"never_followed, ever":  "never_followed: {first: " + m + ", by: {text: never}}",
		"never_followed, done":  "never_followed: {first: " + m + ", by: {text: done}, within: 3}",
		"never_followed, again": "never_followed: {first: " + m + ", by: " + m + ", within: 1000}",
		"budget":                "budget: {steps: 10, tokens: 10}",
	}
	for name, shape := range shapes {
		s := mustParse(t, rule(shape+"\n"))
		var work int
		fs := s.Rules[0].prog.evaluate(tr, &work)
		// Two matchers with a not each is 4 evaluations a step, and each
		// step waits at most once: 5 a step at most.
		if limit := 5 * n; work > limit {
			t.Errorf("%s: %d units of work over %d steps (limit %d)", name, work, n, limit)
		}
		if work < n {
			t.Errorf("%s: %d units of work: the counter is not counting", name, work)
		}
		for _, f := range fs {
			if len(f.Steps) > maxCited {
				t.Errorf("%s: a finding cites %d steps", name, len(f.Steps))
			}
			if err := f.CheckEvidence(tr); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}
