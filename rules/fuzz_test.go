package rules

import (
	"testing"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// FuzzParse checks that no rule file makes the loader panic, and that what
// loads runs: every rule evaluates on a small trace with findings whose
// evidence holds, and a rule written back by AppendRule loads as the same
// rule (the same version).
func FuzzParse(f *testing.F) {
	f.Add([]byte(goodFile))
	f.Add([]byte(rule("sequence:\n  first: {kind: tool_call, not: {tool: x}}\n  then: {exit: [1, 2]}\n  within: 2\n")))
	f.Add([]byte(rule("repeat:\n  match: {any: 'a|b'}\n  same: [text]\n  times: 2\n")))
	tr := build(
		msg(trace.RoleUser, "do it"),
		call("shell", `{"command":["ls","-l"]}`),
		result("shell", "total 0\nerror: a b", 1),
		call("shell", `{"command":["ls","-l"]}`),
		result("shell", "", 0),
		trace.Step{Kind: trace.KindFinal, Role: trace.RoleAssistant, Text: "done é", Tokens: 40},
	)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("f.yaml", data)
		if err != nil {
			return
		}
		again, err := Parse("f.yaml", data)
		if err != nil || again.Hash != s.Hash {
			t.Fatalf("parsing twice: %v, %s vs %s", err, s.Hash, again.Hash)
		}
		_, errs := detect.Run(tr, s.Detectors())
		for _, err := range errs {
			t.Errorf("rejected finding: %v", err)
		}
		for _, r := range s.Rules {
			if _, _, known := taxonomy.Lookup(r.Mode); !known {
				continue // a custom code needs its codes section
			}
			out, err := appendRule("g.yaml", nil, r.Spec)
			if err != nil {
				t.Fatalf("rule %s written back: %v", r.Name, err)
			}
			back, err := Parse("g.yaml", out)
			if err != nil {
				t.Fatalf("rule %s written back does not load: %v\n%s", r.Name, err, out)
			}
			if v := back.Rules[0].Detector.Version; v != r.Detector.Version {
				t.Fatalf("rule %s written back as version %s, was %s:\n%s", r.Name, v, r.Detector.Version, out)
			}
		}
	})
}
