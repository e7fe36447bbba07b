package judge

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/shared"
)

func TestPlanOneWindowWhenTheTraceFits(t *testing.T) {
	tok, _ := NewTokenizer("")
	tr := loadTraces(t, examples)[0]
	views, err := plan(render(tr, DefaultRender, "detector"), tok, DefaultBudget)
	if err != nil || len(views) != 1 {
		t.Fatalf("%d views, %v", len(views), err)
	}
	if len(views[0].own) != len(tr.Steps) || views[0].pinned != nil || strings.Contains(userPrompt(views[0]), "PART ") {
		t.Errorf("single view: own %d of %d steps, pinned %v", len(views[0].own), len(tr.Steps), views[0].pinned)
	}
}

// A trace too long for the context is cut into windows that each fit, cover
// every step, overlap, and repeat the task setup.
func TestPlanWindows(t *testing.T) {
	tok, _ := NewTokenizer("")
	tr := longTrace(t)
	r := render(tr, DefaultRender, "detector")
	b := Budget{Context: 12000, Output: 2000}
	views, err := plan(r, tok, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(views) < 4 || r.setup == 0 {
		t.Fatalf("%d steps in a context of %d: %d windows, setup %d", len(tr.Steps), b.Context, len(views), r.setup)
	}
	covered := map[int]bool{}
	for k, v := range views {
		v.summary = strings.Repeat("word ", summaryChars/5)
		if n := tok.system + tok.Count(userPrompt(v)) + b.Output; n > b.Context {
			t.Errorf("window %d needs %d tokens, context is %d", k, n, b.Context)
		}
		if !slices.Equal(v.pinned, seq(0, r.setup)) {
			t.Errorf("window %d pins %v, setup is %d steps", k, v.pinned, r.setup)
		}
		for _, i := range v.own {
			covered[i] = true
		}
		if k > 0 {
			prev := views[k-1]
			if v.own[0] <= prev.own[0] || v.own[0] > prev.own[len(prev.own)-1] {
				t.Errorf("window %d starts at S%d; the previous one spans %s", k, v.own[0], prev.span())
			}
			p := userPrompt(v)
			if !strings.Contains(p, fmt.Sprintf("PART %d OF %d: steps %s, after the task setup steps S0-S%d.", k+1, len(views), v.span(), r.setup-1)) ||
				!strings.Contains(p, "SUMMARY OF THE EARLIER PARTS") {
				t.Errorf("window %d prompt lacks its part line or summary:\n%s", k, p[:300])
			}
		}
	}
	for i := r.setup; i < len(tr.Steps); i++ {
		if !covered[i] {
			t.Errorf("step S%d is in no window", i)
		}
	}
}

func TestPlanRefusesAStepThatCannotFit(t *testing.T) {
	tok, _ := NewTokenizer("")
	tr := handTrace()
	_, err := plan(render(tr, DefaultRender, "detector"), tok, Budget{Context: tok.system + 1500, Output: 500})
	if err == nil || !strings.Contains(err.Error(), "alone needs about") {
		t.Fatalf("err = %v", err)
	}
}

func TestMergeWindowsKeepsEarliestOccurrence(t *testing.T) {
	mk := func(present map[string][]int, summary string) *Answer {
		a := &Answer{Modes: map[string]ModeAnswer{}, Summary: summary, TaskSuccess: "unknown"}
		for _, c := range []string{"FM-1.1", "FM-1.3", "FM-3.3"} {
			a.Modes[c] = ModeAnswer{Confidence: 0.6}
		}
		for c, steps := range present {
			a.Modes[c] = ModeAnswer{Present: true, Steps: steps, Quote: summary, Confidence: 0.9}
		}
		return a
	}
	merged := mergeWindows([]*Answer{
		mk(map[string][]int{"FM-1.3": {30, 12}}, "first"),
		mk(map[string][]int{"FM-1.3": {14}, "FM-3.3": {50}}, "second"),
		mk(nil, "third"),
	})
	if m := merged.Modes["FM-1.3"]; !m.Present || m.Quote != "first" {
		t.Errorf("FM-1.3 = %+v, want the first window's (earliest step S12)", m)
	}
	if m := merged.Modes["FM-3.3"]; !m.Present || m.Quote != "second" {
		t.Errorf("FM-3.3 = %+v", m)
	}
	if merged.Modes["FM-1.1"].Present || merged.Summary != "third" {
		t.Errorf("merged %+v", merged)
	}
}

// The real ITBench rollouts fit a 128k context after rendering, except
// that even the largest is judged in a few windows at 32k.
func TestPlanRealRollouts(t *testing.T) {
	dir := shared.Path(t, "itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1")
	tok, _ := NewTokenizer("")
	for _, tr := range loadTraces(t, dir) {
		r := render(tr, DefaultRender, "detector")
		for _, b := range []Budget{DefaultBudget, {Context: 32000, Output: 4000}} {
			views, err := plan(r, tok, b)
			if err != nil {
				t.Errorf("trace %s, context %d: %v", tr.ID, b.Context, err)
				continue
			}
			if b == DefaultBudget && len(views) != 1 {
				t.Errorf("trace %s (%d steps): %d windows at 128k", tr.ID, len(tr.Steps), len(views))
			}
		}
	}
}
