package web

import (
	"regexp"
	"testing"

	"github.com/faultline/faultline/trace"
)

// With no pair asked for, the agreement page reads a source as the
// prediction against a reference, as eval reads --source against
// --labels: a judge, else the detectors, against a human labeller, else a
// dataset's annotator that decides modes (not Who&When's decisive errors,
// which name none), else a judge.
func TestAgreementDefaultDirection(t *testing.T) {
	f := func(source string, v trace.Verdict) trace.Finding {
		return trace.Finding{Mode: "FM-1.3", Source: source, Verdict: v}
	}
	decisive := trace.Finding{Source: "human:whowhen", Verdict: trace.Present, RawLabel: "decisive error", Steps: []int{1}}
	tests := []struct {
		name              string
		findings          []trace.Finding
		source, reference string
	}{
		{"a labeller and a judge", []trace.Finding{f("human:ann", trace.Present), f("judge:m", trace.Absent)}, "judge:m", "human:ann"},
		{"a labeller alone", []trace.Finding{f("human:ann", trace.Present)}, "detector", "human:ann"},
		{"an annotator beside decisive errors", []trace.Finding{decisive, f("mad:annotator_1", trace.Present), f("mad:annotator_2", trace.Absent)}, "detector", "mad:annotator_1"},
		{"a judge alone", []trace.Finding{f("judge:m", trace.Present)}, "detector", "judge:m"},
	}
	selected := func(page, name string) string {
		m := regexp.MustCompile(`(?s)<select name="` + name + `">.*?<option selected>([^<]*)</option>`).FindStringSubmatch(page)
		if m == nil {
			return ""
		}
		return m[1]
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openStore(t)
			a := agentRun("a", "m1", false, "pod checkout-7 CrashLoopBackOff")
			a.Findings = tt.findings
			put(t, st, "/runs.jsonl", a)
			page := serve(t, Config{Store: st}).ok("/agreement")
			if got, want := selected(page, "a")+" against "+selected(page, "b"), tt.source+" against "+tt.reference; got != want {
				t.Errorf("the default pair is %s, want %s", got, want)
			}
		})
	}
}
