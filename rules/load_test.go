package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/detect"
)

const goodFile = `# team rules
models:
  gpt-x: gpt-x-1
judge:
  model: whatever
codes:
  - code: OPS-1
    name: Cluster access lost
    doc: The agent lost access to the cluster and kept going.
rules:
  - name: lost-access
    mode: OPS-1
    doc: The agent kept working after losing the cluster. Looks for Unauthorized.
    severity: high
    confidence: 0.9
    match:
      kind: tool_result
      text: Unauthorized
  - name: long
    mode: FM-1.5
    doc: A long run.
    budget:
      steps: 200
`

func TestParseGood(t *testing.T) {
	s := mustParse(t, goodFile)
	if len(s.Codes) != 1 || len(s.Rules) != 2 {
		t.Fatalf("codes %v, rules %d", s.Codes, len(s.Rules))
	}
	c, ok := s.Code("OPS-1")
	if !ok || c.Name != "Cluster access lost" || c.Line != 7 {
		t.Errorf("Code(OPS-1) = %+v, %v", c, ok)
	}
	if _, ok := s.Code("FM-1.3"); ok {
		t.Error("Code reports a MAST code as the file's own")
	}
	r := s.Rules[0]
	if r.Line != 11 || r.Shape() != "match" || r.Severity != "high" || r.Confidence != 0.9 {
		t.Errorf("rule %+v", r)
	}
	d := r.Detector
	if d.Name != "lost-access" || d.Mode != "OPS-1" || d.Severity != "high" || d.Taxonomy != detect.CustomTaxonomy || len(d.Version) != 12 {
		t.Errorf("detector %+v", d)
	}
	if d.Summary() != "The agent kept working after losing the cluster." {
		t.Errorf("summary %q", d.Summary())
	}
	long := s.Rules[1].Detector
	if long.Severity != DefaultSeverity || long.Taxonomy != "" {
		t.Errorf("defaults: %+v", long)
	}
	if len(s.Hash) != 12 {
		t.Errorf("hash %q", s.Hash)
	}
	if got := s.Detectors(); len(got) != 2 || got[0] != d {
		t.Errorf("Detectors() = %v", got)
	}
}

func TestParseEmpty(t *testing.T) {
	for _, src := range []string{"", "# nothing yet\n", "rules:\n", "codes:\nrules: []\n", "models:\n  a: b\n"} {
		s, err := Parse("f.yaml", []byte(src))
		if err != nil || len(s.Rules) != 0 {
			t.Errorf("%q: %v, %v", src, s, err)
		}
	}
	s, err := Load("")
	if err != nil || len(s.Rules) != 0 || s.Hash == "" {
		t.Errorf("Load(\"\") = %+v, %v", s, err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

func TestParseErrors(t *testing.T) {
	// Each file is one rule (or section) with one mistake: the error must
	// name the line and say what is wrong.
	head := "rules:\n  - name: r\n    mode: FM-1.3\n    doc: A rule.\n"
	tests := []struct {
		name string
		src  string
		line int
		frag string
	}{
		{"yaml syntax", "rules:\n  - name: [\n", 2, "did not find expected"},
		{"top level not a mapping", "- a\n- b\n", 1, "the file must be a mapping"},
		{"unknown section", "models: {}\nguards: []\n", 2, `unknown section "guards"`},
		{"rules not a list", "rules: {}\n", 1, "rules: a list of rules"},
		{"unknown rule field", head + "    match: {kind: final}\n    colour: red\n", 6, `unknown field "colour" of a rule`},
		{"missing name", "rules:\n  - mode: FM-1.3\n    doc: A rule.\n    match: {kind: final}\n", 2, "a rule needs a name"},
		{"bad name", "rules:\n  - name: Bad_Name\n    mode: FM-1.3\n    doc: A rule.\n    match: {kind: final}\n", 2, `rule name "Bad_Name"`},
		{"built-in name", "rules:\n  - name: repeated-tool-call\n    mode: FM-1.3\n    doc: A rule.\n    match: {kind: final}\n", 2, "the name of a built-in detector"},
		{"missing mode", "rules:\n  - name: r\n    doc: A rule.\n    match: {kind: final}\n", 2, "rule r needs a mode"},
		{"unknown mode", "rules:\n  - name: r\n    mode: FM-9.9\n    doc: A rule.\n    match: {kind: final}\n", 3, `unknown mode "FM-9.9"`},
		{"missing doc", "rules:\n  - name: r\n    mode: FM-1.3\n    match: {kind: final}\n", 2, "rule r needs a doc"},
		{"no shape", head, 2, "rule r has no shape"},
		{"two shapes", head + "    match: {kind: final}\n    budget: {steps: 3}\n", 2, "gives match and budget: give exactly one shape"},
		{"bad regex", head + "    match:\n      text: 'a(b'\n", 6, "match.text: bad regular expression: error parsing regexp: missing closing )"},
		{"empty-only regex", head + "    match:\n      args: '^$'\n", 6, "can match only the empty string"},
		{"empty regex", head + "    match:\n      any: ''\n", 6, "can match only the empty string"},
		{"regex matching nothing", head + "    match:\n      text: '[^\\x00-\\x{10FFFF}]'\n", 6, "can never match"},
		{"exit on a call", head + "    match:\n      kind: tool_call\n      exit: nonzero\n", 5, "exit codes live on tool_result steps"},
		{"unknown kind", head + "    match:\n      kind: [tool_call, tool_output]\n", 6, `unknown kind "tool_output"`},
		{"not equal to parent", head + "    match:\n      tool: shell\n      not:\n        tool: shell\n", 5, "every step it matches is excluded by its not"},
		{"empty matcher", head + "    match: {}\n", 5, "an empty matcher matches every step"},
		{"bad exit", head + "    match:\n      exit: sometimes\n", 6, "exit: nonzero, zero, an integer or a list of integers"},
		{"bad bool", head + "    match:\n      error: maybe\n", 6, "match.error: true or false"},
		{"unknown matcher field", head + "    match:\n      tools: shell\n", 6, `unknown field "tools" of a matcher`},
		{"within zero", head + "    sequence:\n      first: {kind: tool_call}\n      then: {kind: final}\n      within: 0\n", 8, "sequence.within: a whole number from 1"},
		{"within missing", head + "    sequence:\n      first: {kind: tool_call}\n      then: {kind: final}\n", 5, "sequence needs within"},
		{"never_followed without by", head + "    never_followed:\n      first: {kind: tool_call}\n", 5, "never_followed needs by"},
		{"times one", head + "    repeat:\n      match: {kind: tool_call}\n      same: [args]\n      times: 1\n", 8, "repeat.times: a whole number from 2"},
		{"same unknown", head + "    repeat:\n      match: {kind: tool_call}\n      same: [args, output]\n      times: 2\n", 7, `repeat.same: "output" is not one of tool, args, text`},
		{"at_least negative", head + "    count:\n      match: {kind: tool_call}\n      at_least: -1\n", 7, "count.at_least: a whole number from 1"},
		{"budget empty", head + "    budget: {}\n", 5, "budget: give steps, tokens or both"},
		{"severity", head + "    severity: critical\n    budget: {steps: 3}\n", 5, `severity: low, medium or high, not "critical"`},
		{"confidence zero", head + "    confidence: 0\n    budget: {steps: 3}\n", 5, "confidence: a number above 0 and at most 1"},
		{"confidence above one", head + "    confidence: 1.5\n    budget: {steps: 3}\n", 5, "confidence: a number above 0 and at most 1"},
		{"duplicate rule", head + "    budget: {steps: 3}\n  - name: r\n    mode: FM-1.3\n    doc: Again.\n    budget: {steps: 4}\n", 6, "rule r is given twice (first on line 2)"},
		{"duplicate field", head + "    budget: {steps: 3}\n    doc: Again.\n", 6, `"doc" is given twice`},
		{"code collides with MAST", "codes:\n  - code: FM-1.3\n    name: Mine\n", 2, "FM- and SYS- codes belong to MAST"},
		{"code collides with SYS", "codes:\n  - code: SYS-9\n    name: Mine\n", 2, "FM- and SYS- codes belong to MAST"},
		{"bad code", "codes:\n  - code: ops1\n    name: Mine\n", 2, `code "ops1": write it as PREFIX-ID`},
		{"code without name", "codes:\n  - code: OPS-1\n", 2, "code OPS-1 needs a name"},
		{"duplicate code", "codes:\n  - code: OPS-1\n    name: A\n  - code: OPS-1\n    name: B\n", 4, "code OPS-1 is declared twice (first on line 2)"},
		{"unknown code field", "codes:\n  - code: OPS-1\n    name: A\n    severity: high\n", 4, `unknown field "severity" of a code`},
		{"nested not cannot hold", head + "    match:\n      kind: tool_call\n      not:\n        args: x\n        not: {}\n", 9, "match.not.not: an empty matcher"},
		{"matcher not a mapping", head + "    count:\n      match: shell\n      at_least: 2\n", 6, "count.match must be a mapping of fields"},
		{"regex as a list", head + "    match:\n      text: [a, b]\n", 6, "match.text: a string"},
		{"repeat without same", head + "    repeat:\n      match: {kind: tool_call}\n      times: 2\n", 5, "repeat needs same"},
		{"mode of an undeclared code", "rules:\n  - name: r\n    mode: OPS-2\n    doc: A rule.\n    match: {kind: final}\n", 3, `unknown mode "OPS-2"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tt.src))
			if err == nil {
				t.Fatalf("parsed without error:\n%s", tt.src)
			}
			prefix := fmt.Sprintf("bad.yaml:%d: ", tt.line)
			if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tt.frag) {
				t.Errorf("error %q, want %q…%q", err, prefix, tt.frag)
			}
		})
	}
}

func TestHash(t *testing.T) {
	base := mustParse(t, goodFile)
	// Comments, layout and defaults spelt out change nothing.
	same := strings.NewReplacer(
		"# team rules\n", "",
		"    match:\n      kind: tool_result\n      text: Unauthorized\n", "    match: {kind: tool_result, text: Unauthorized}   # flow style\n",
		"    budget:\n      steps: 200\n", "    severity: medium\n    confidence: 0.8\n    budget:\n        steps: 200\n",
	).Replace(goodFile)
	if same == goodFile {
		t.Fatal("replacements did not apply")
	}
	s2 := mustParse(t, same)
	if s2.Hash != base.Hash {
		t.Errorf("hash changed with layout only: %s → %s", base.Hash, s2.Hash)
	}
	for i := range base.Rules {
		if s2.Rules[i].Detector.Version != base.Rules[i].Detector.Version {
			t.Errorf("rule %s: version changed with layout only", base.Rules[i].Name)
		}
	}
	// A changed rule changes its own version and the set's hash, not the
	// other rules' versions.
	changed := mustParse(t, strings.Replace(goodFile, "steps: 200", "steps: 201", 1))
	if changed.Hash == base.Hash {
		t.Error("hash unchanged by a changed rule")
	}
	if changed.Rules[1].Detector.Version == base.Rules[1].Detector.Version {
		t.Error("version unchanged by a changed rule")
	}
	if changed.Rules[0].Detector.Version != base.Rules[0].Detector.Version {
		t.Error("an unchanged rule's version changed")
	}
	// The version is part of the detector set's version, built-ins as they were.
	v := detect.Version(append([]*detect.Detector{detect.RepeatedToolCall}, base.Detectors()...))
	want := "repeated-tool-call,lost-access@" + base.Rules[0].Detector.Version + ",long@" + base.Rules[1].Detector.Version
	if !strings.HasSuffix(v, want) {
		t.Errorf("detect.Version = %q, want suffix %q", v, want)
	}
}

func TestLoadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "faultline.yaml")
	if err := os.WriteFile(path, []byte(goodFile), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil || s.Path != path || len(s.Rules) != 2 {
		t.Fatalf("Load = %+v, %v", s, err)
	}
}

func TestRegexEmptiness(t *testing.T) {
	for _, tt := range []struct {
		re   string
		want string // "" when the expression is accepted
	}{
		{`a`, ""}, {`a*`, ""}, {`(?:)|x`, ""}, {`\bword\b`, ""}, {`x{0,3}`, ""}, {`[^a]`, ""},
		{``, "only the empty string"}, {`^$`, "only the empty string"}, {`\b`, "only the empty string"},
		{`(?:^|$)*`, "only the empty string"}, {`(?m)^(?:)$`, "only the empty string"}, {`x{0}`, "only the empty string"},
		{`[^\x00-\x{10FFFF}]`, "never match"}, {`a[^\x00-\x{10FFFF}]`, "never match"},
		{`[^\x00-\x{10FFFF}]?`, "only the empty string"},
	} {
		_, err := Parse("r.yaml", []byte(rule("match:\n  text: '"+tt.re+"'\n")))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q refused: %v", tt.re, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q: %v, want %q", tt.re, err, tt.want)
		}
	}
}

// The settings file's other sections are other commands'; a rule file of
// its own has none.
func TestLoadSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "faultline.yaml")
	data := "other_command:\n  x: 1\nrules:\n  - name: long\n    mode: FM-1.5\n    doc: Long.\n    budget: {steps: 3}\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := LoadSettings(path)
	if err != nil || len(set.Rules) != 1 {
		t.Fatalf("settings file: %v, %+v", err, set)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path+`:1: unknown section "other_command"`) {
		t.Errorf("rule file: %v", err)
	}
	if set, err := LoadSettings(""); err != nil || len(set.Rules) != 0 {
		t.Errorf("no file: %v, %+v", err, set)
	}
}

func TestIsCustomCode(t *testing.T) {
	for code, want := range map[string]bool{"OPS-1": true, "ACME-db.2": true, "FM-1.3": false, "SYS-1": false, "FM-9.9": false, "ops-1": false, "OPS": false} {
		if got := IsCustomCode(code); got != want {
			t.Errorf("IsCustomCode(%q) = %v", code, got)
		}
	}
}

func TestModeName(t *testing.T) {
	set, err := Parse("r.yaml", []byte("codes:\n  - code: OPS-1\n    name: Shell failed\n"))
	if err != nil {
		t.Fatal(err)
	}
	names := set.CodeNames()
	for code, want := range map[string]string{"FM-1.3": "Step repetition", "SYS-1": "Empty model response", "OPS-1": "Shell failed", "OPS-2": ""} {
		if got := ModeName(code, names); got != want {
			t.Errorf("ModeName(%s) = %q, want %q", code, got, want)
		}
	}
}
