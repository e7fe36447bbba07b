package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/analyze"
)

// userRules is a rule file with a code of its own: a failed shell command
// in the bundled examples (two traces have one).
const userRules = `codes:
  - code: OPS-1
    name: Shell command failed
rules:
  - name: shell-failed
    mode: OPS-1
    doc: A shell command exited with an error.
    match:
      kind: tool_result
      exit: %s
`

// The rules of a rule file run wherever the built-in detectors run: they are
// listed with them, ingest finds with them, the report counts their codes
// apart, a changed rule makes analyze detect again, and a guard policy may
// name them.
func TestRulesRunWithTheDetectors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "rules.yaml")
	write := func(exit string) {
		if err := os.WriteFile(file, []byte(strings.Replace(userRules, "%s", exit, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("nonzero")
	c := newCLI(t)
	must := func(args ...string) string {
		t.Helper()
		out, errOut, code := c.run("", append([]string{"--rules", file}, args...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return out
	}

	var listed []detectorJSON
	if err := json.Unmarshal([]byte(must("detectors", "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	last := listed[len(listed)-1]
	if last.Name != "shell-failed" || last.Mode != "OPS-1" || last.ModeName != "Shell command failed" || last.Rule != file {
		t.Errorf("the rule is listed as %+v", last)
	}

	custom := func() []analyze.CustomCode {
		t.Helper()
		var r analyze.Report
		if err := json.Unmarshal([]byte(must("report", "--format", "json")), &r); err != nil {
			t.Fatal(err)
		}
		return r.All.Custom
	}
	must("ingest", examples)
	got := custom()
	if len(got) != 1 || got[0].Code != "OPS-1" || got[0].Name != "Shell command failed" || got[0].Traces.K != 2 {
		t.Fatalf("custom codes after ingest: %+v", got)
	}
	if out := must("report"); !strings.Contains(out, "Your own codes") || !strings.Contains(out, "OPS-1 Shell command failed") {
		t.Errorf("the text report does not show the rule's code:\n%s", out)
	}

	// The rule changed: its findings are stale. Ingest renews those of the
	// files it does not read again, and so does analyze.
	write("99")
	var res ingestResult
	if err := json.Unmarshal([]byte(must("ingest", "--json", examples)), &res); err != nil {
		t.Fatal(err)
	}
	if res.Unchanged != 12 || res.Redetected != 12 {
		t.Errorf("ingest again: %d unchanged, %d detected again", res.Unchanged, res.Redetected)
	}
	if got := custom(); len(got) != 0 {
		t.Errorf("custom codes after the rule changed: %+v", got)
	}
	write("nonzero")
	must("analyze")
	if got := custom(); len(got) != 1 {
		t.Errorf("custom codes after the rule changed back: %+v", got)
	}

	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("rules:\n  - name: shell\n    detectors: [shell-failed]\n    action: annotate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must("guard", "replay", "--policy", policy, examples)
	if _, errOut, code := c.run("", "guard", "replay", "--policy", policy, examples); code == exitOK || !strings.Contains(errOut, `no detector "shell-failed"`) {
		t.Errorf("without the rule file, a policy naming its rule loads: exit %d: %s", code, errOut)
	}
}

// Ingest warns of a rule naming a tool none of the traces it read calls.
func TestIngestWarnsOfAToolNoTraceCalls(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rules.yaml")
	rule := "rules:\n  - name: shell-failed\n    mode: FM-1.4\n    doc: A shell call failed.\n    match:\n      tool: shel\n      exit: nonzero\n"
	if err := os.WriteFile(file, []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := newCLI(t).run("", "--rules", file, "ingest", examples)
	if want := file + `:6: rule shell-failed: tool "shel" never occurs in the traces (did you mean "shell"?)`; code != exitOK || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant %s", code, errOut, want)
	}
}
