package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/shared"
)

const exampleRules = "../../examples/rules/itbench.yaml"

func TestRulesCheckLists(t *testing.T) {
	c := newCLI(t)
	out, errOut, code := c.run("", "rules", "check", "--rules", exampleRules)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`itbench\.yaml: 7 rules, 1 code, hash [0-9a-f]{12}`),
		regexp.MustCompile(`script-as-program +OPS-1 +match +[0-9a-f]{12} +A shell call failed because its command was a script, not a program`),
		regexp.MustCompile(`errors-without-recovery +FM-1\.4 +never_followed `),
		regexp.MustCompile(`long-run +FM-1\.5 +budget `),
	} {
		if !want.MatchString(out) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}

func TestRulesCheckOnRealRollouts(t *testing.T) {
	dir := shared.Path(t, "itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1")
	rules := filepath.Join(t.TempDir(), "r.yaml")
	data, err := os.ReadFile(exampleRules)
	if err != nil {
		t.Fatal(err)
	}
	// A misspelt tool is warned about, with the name the traces use.
	lines := strings.Count(string(data), "\n")
	data = append(data, "  - name: misspelt\n    mode: FM-1.3\n    doc: A typo.\n    match:\n      tool: shel\n"...)
	if err := os.WriteFile(rules, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	out, errOut, code := c.run("", "-q", "rules", "check", "--rules", rules, dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"25 traces (504 steps) read from 28 files",
		"script-as-program        3       5      3",
		"write-outside-output     0       0      0",
		"identical-query          1       2      1",
		"errors-without-recovery  1       1      1",
		"truncated-arguments      1       4      1",
		"long-run                 2       2      2",
		fmt.Sprintf(`warning: %s:%d: rule misspelt: tool "shel" never occurs in the traces (did you mean "shell"?)`, rules, lines+5),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestRulesCheckErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("rules:\n  - name: r\n    mode: FM-7.7\n    doc: A rule.\n    budget: {steps: 3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	_, errOut, code := c.run("", "rules", "check", "--rules", bad)
	if code != exitFailure || !strings.Contains(errOut, bad+`:3: rule r: unknown mode "FM-7.7"`) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	// Without --rules, the settings file named by --config is read.
	_, errOut, code = c.run("", "--config", bad, "rules", "check")
	if code != exitFailure || !strings.Contains(errOut, bad+":3:") {
		t.Errorf("--config: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = c.run("", "rules", "check", "--rules", filepath.Join(dir, "missing.yaml"))
	if code != exitFailure || !strings.Contains(errOut, "missing.yaml") {
		t.Errorf("missing file: exit %d, stderr %q", code, errOut)
	}
}

// With no trace read, no rule is said to name a tool the traces never call.
func TestRulesCheckOnNothingWarnsOfNoTool(t *testing.T) {
	out, errOut, code := newCLI(t).run("", "rules", "check", "--rules", filepath.Join(examples, "rules", "itbench.yaml"), filepath.Join(t.TempDir(), "none"))
	if code != exitDataError || !strings.Contains(errOut, "cannot read") || strings.Contains(out, "never occurs") {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
}
