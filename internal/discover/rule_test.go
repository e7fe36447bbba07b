package discover

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/rules"
	"github.com/faultline/faultline/trace"
)

// An error pattern becomes a rule that, saved and loaded, finds the
// failed results the pattern was made from, and not others.
func TestRuleFor(t *testing.T) {
	line := "head: /Users/noahz/ITBench-Lite/snapshots/sre/alerts/alerts_at_2025-12-15T17-30-49.329092.json: No such file or directory"
	p := &Pattern{ID: "ab12cd34ef", Kind: KindError, Key: "shell", Template: Normalise(line)}
	if _, err := RuleFor(p, ""); !errors.Is(err, ErrNoRule) || !strings.Contains(err.Error(), "no mode of its own") {
		t.Errorf("an error pattern with no mode: %v", err)
	}
	sp, err := RuleFor(p, "FM-2.3")
	if err != nil {
		t.Fatal(err)
	}
	if sp.Name != "pattern-ab12cd34ef" || sp.Mode != "FM-2.3" || sp.Match.Tool[0] != "shell" || sp.Match.Kind[0] != "tool_result" ||
		!strings.HasPrefix(sp.Doc, `shell fails with "head: <path>/alerts_at_<time>.json: No such file or directory".`) {
		t.Errorf("spec %+v %+v", sp, sp.Match)
	}
	path := filepath.Join(t.TempDir(), "faultline.yaml")
	if err := os.WriteFile(path, []byte("models:\n  gpt-oss-120b-fp8: gpt-oss-120b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := rules.AppendRule(path, sp); err != nil {
		t.Fatal(err)
	}
	set, err := rules.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Rules) != 1 {
		t.Fatalf("%d rules loaded", len(set.Rules))
	}
	tr := &trace.Trace{ID: "t"}
	exit := 1
	tr.Append(trace.Step{Kind: trace.KindToolResult, Tool: "shell", ExitCode: &exit, Text: "head: /tmp/other/alerts/alerts_at_2026-01-02T03-04-05.000001.json: No such file or directory\n"})
	tr.Append(trace.Step{Kind: trace.KindToolResult, Tool: "shell", ExitCode: &exit, Text: "head: /tmp/other/alerts/topology.json: No such file or directory"})
	tr.Append(trace.Step{Kind: trace.KindToolResult, Tool: "python", ExitCode: &exit, Text: line})
	findings, errs := detect.Run(tr, []*detect.Detector{set.Rules[0].Detector})
	if len(errs) > 0 || len(findings) != 1 || len(findings[0].Steps) != 1 || findings[0].Steps[0] != 0 {
		t.Errorf("findings %+v, errors %v", findings, errs)
	}

	named := *p
	named.Naming = &Naming{Status: Named, Name: "Alert file missing.", Description: "The agent reads an alert file that is not there.", Code: "FM-1.1"}
	if sp, err := RuleFor(&named, ""); err != nil || sp.Mode != "FM-1.1" || !strings.HasPrefix(sp.Doc, "Alert file missing: The agent reads") {
		t.Errorf("named: %+v %v", sp, err)
	}

	finding := &Pattern{ID: "0f", Kind: KindFinding, Key: "FM-3.1", Template: "tool_call: jq -e '.entities | length' agent_output.json"}
	if sp, err := RuleFor(finding, ""); err != nil || sp.Mode != "FM-3.1" || sp.Match.Kind[0] != "tool_call" || sp.Match.Any == "" {
		t.Errorf("finding: %+v %v", sp, err)
	}
	for _, p := range []*Pattern{
		{ID: "1", Kind: KindEnding, Template: "shell:jq ⇒ ends with a final answer"},
		{ID: "2", Kind: KindFinding, Key: "FM-1.3", Template: "(unlocated)"},
	} {
		if _, err := RuleFor(p, "FM-1.1"); !errors.Is(err, ErrNoRule) {
			t.Errorf("%s: %v", p.Template, err)
		}
	}
}
