package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// committed is the cohort as checked in, relative to this package.
var committed = filepath.Join("..", cohortDir)

// TestCommittedCohortIsGenerated regenerates the cohort and compares it
// with the committed copy file by file, so that the examples can never
// drift from the generator (or be edited by hand).
func TestCommittedCohortIsGenerated(t *testing.T) {
	out := t.TempDir()
	if err := generate(out); err != nil {
		t.Fatal(err)
	}
	got, want := readTree(t, filepath.Join(out, cohortDir)), readTree(t, committed)
	for name, b := range got {
		w, ok := want[name]
		switch {
		case !ok:
			t.Errorf("%s is generated but not committed", name)
		case !bytes.Equal(b, w):
			t.Errorf("%s differs from the generator's output", name)
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("%s is committed but no longer generated", name)
		}
	}
	if t.Failed() {
		t.Log("run `go run ./examples/generate` from the repository root and commit the result")
	}
	// A second run must give the same bytes: nothing may depend on the
	// clock, map order or the machine.
	again := t.TempDir()
	if err := generate(again); err != nil {
		t.Fatal(err)
	}
	for name, b := range readTree(t, filepath.Join(again, cohortDir)) {
		if !bytes.Equal(b, got[name]) {
			t.Errorf("%s differs between two runs of the generator", name)
		}
	}
}

// TestRolloutLines checks that every rollout line is one event of the Codex
// rollout format, and that each file opens with its session_meta.
func TestRolloutLines(t *testing.T) {
	files := 0
	for name, b := range readTree(t, committed) {
		if !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		files++
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			var ev struct {
				Timestamp string          `json:"timestamp"`
				Type      string          `json:"type"`
				Payload   json.RawMessage `json:"payload"`
			}
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Fatalf("%s:%d: %v", name, n, err)
			}
			if _, err := time.Parse(time.RFC3339Nano, ev.Timestamp); err != nil {
				t.Errorf("%s:%d: timestamp: %v", name, n, err)
			}
			if ev.Type == "" || !bytes.HasPrefix(ev.Payload, []byte("{")) {
				t.Errorf("%s:%d: want a type and an object payload, got %q and %.20s", name, n, ev.Type, ev.Payload)
			}
			if (n == 1) != (ev.Type == "session_meta") {
				t.Errorf("%s:%d: session_meta must be the first line and only the first", name, n)
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if want := len(cohort()); files != want {
		t.Errorf("found %d rollouts, want one per run (%d)", files, want)
	}
}

// readTree returns the files under root by slash-separated relative path.
func readTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
