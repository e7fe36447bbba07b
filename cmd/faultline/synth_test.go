package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSynth(t *testing.T) {
	c := newCLI(t)
	dir := filepath.Join(t.TempDir(), "corpus")
	args := []string{"synth", "--seed", "4", "--traces", "15", "--out", dir}
	_, errOut, code := c.run("", args...)
	if code != exitOK || !strings.Contains(errOut, "wrote 15 traces (5 controls) to "+dir) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	first, err := os.ReadFile(filepath.Join(dir, "planted.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The same flags rewrite the same corpus.
	if _, errOut, code := c.run("", args...); code != exitOK {
		t.Fatalf("second run: exit %d: %s", code, errOut)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "planted.json")); !bytes.Equal(first, again) {
		t.Error("the same flags wrote another manifest")
	}
	// --json prints the manifest that was written.
	out, _, _ := c.run("", append(args, "--json", "-q")...)
	var m struct{ Traces []struct{ ID string } }
	if err := json.Unmarshal([]byte(out), &m); err != nil || len(m.Traces) != 15 {
		t.Errorf("--json: %v\n%s", err, out)
	}
	// What synth writes, faultline reads without a single error.
	if out, errOut, code := c.run("", "analyze", dir); code != exitOK || !strings.Contains(errOut, "ingested 15 traces") {
		t.Errorf("analyze: exit %d\n%s\n%s", code, out, errOut)
	}

	out, _, code = c.run("", "synth", "--score", "--traces", "15", "--modes", "fm-1.3,1.5,FM-3.1")
	if code != exitOK || !strings.Contains(out, "repeated-tool-call") || !strings.Contains(out, "found at step") {
		t.Errorf("--score: exit %d\n%s", code, out)
	}
	out, _, _ = c.run("", "synth", "--score", "--json", "--traces", "15")
	var card struct {
		Traces, Controls int
		Modes            []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &card); err != nil || card.Traces != 15 || card.Controls != 5 || len(card.Modes) == 0 {
		t.Errorf("--score --json: %v\n%s", err, out)
	}
}

func TestSynthExamplesAreTheCommittedOnes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "examples")
	if _, errOut, code := newCLI(t).run("", "synth", "--examples", "--out", dir, "-q"); code != exitOK || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "planted.json"))
	want, _ := os.ReadFile(filepath.Join(examples, "itbench-zero", "planted.json"))
	if len(got) == 0 || !bytes.Equal(got, want) {
		t.Error("synth --examples does not write the committed examples")
	}
}

func TestSynthUsageErrors(t *testing.T) {
	c := newCLI(t)
	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"synth"}, "say where to write the corpus with --out DIR"},
		{[]string{"synth", "--score", "--modes", "FM-9.9"}, `--modes: unknown mode "FM-9.9"; synth plants FM-1.1, FM-1.3`},
		{[]string{"synth", "--score", "--modes", "FM-2.1"}, "--modes: synth cannot plant FM-2.1 (Conversation reset)"},
		{[]string{"synth", "--score", "--traces", "4"}, "4 traces leave 2 to plant in"},
		{[]string{"synth", "--examples", "--seed", "3", "--out", foreign}, "--examples writes the bundled cohort, which takes no --seed"},
		{[]string{"synth", "--out", foreign}, "is not empty and holds no planted.json"},
		{[]string{"synth", "--score", "extra"}, `unknown command "extra"`},
	}
	for _, tt := range tests {
		_, errOut, code := c.run("", tt.args...)
		if code != exitFailure || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, code, errOut, tt.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(foreign, "notes.txt")); string(b) != "mine" {
		t.Error("synth touched a directory it refused")
	}
}
