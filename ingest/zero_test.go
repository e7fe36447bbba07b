package ingest

import (
	"path/filepath"
	"strings"
	"testing"
)

// A walk's session counts are handed on only for the run directories whose
// sessions/ it met whole, and are then those a walk of sessions/ counts.
func TestSessionCounter(t *testing.T) {
	tests := []struct {
		name string
		walk string
		met  []string // in walk order; "skip:" a directory skipped
		want map[string]int
	}{
		{"runs one after another", "runs", []string{
			"runs/a/AGENTS.md", "runs/a/agent_output.json", "runs/a/sessions/2026/01/01/r1.jsonl",
			"runs/b/agent_output.json", "runs/b/sessions/2026/01/01/r1.jsonl", "runs/b/sessions/2026/01/02/r2.jsonl",
			"runs/c/sessions/x.jsonl",
		}, map[string]int{"runs/a": 1, "runs/b": 2, "runs/c": 1}},
		{"a hidden directory skipped in sessions/", "runs", []string{
			"skip:runs/a/sessions/.cache", "runs/a/sessions/r1.jsonl", "runs/b/sessions/r1.jsonl",
		}, map[string]int{"runs/b": 1}},
		{"skipped before the first file of sessions/", "runs", []string{
			"runs/a/sessions/r1.jsonl", "skip:runs/a/sessions/.old", "runs/a/sessions/r2.jsonl",
		}, map[string]int{}},
		{"a walk inside sessions/", "runs/a/sessions/2026", []string{
			"runs/a/sessions/2026/r1.jsonl",
		}, map[string]int{}},
		{"a walk of sessions/ itself", "runs/a/sessions", []string{
			"runs/a/sessions/r1.jsonl", "runs/a/sessions/r2.jsonl",
		}, map[string]int{"runs/a": 2}},
		{"a run directory nested in sessions/", "data", []string{
			"data/sessions/run1/AGENTS.md", "data/sessions/run1/sessions/r1.jsonl",
			"data/sessions/run2/AGENTS.md", "data/sessions/run2/sessions/r1.jsonl",
		}, map[string]int{"data/sessions/run1": 1, "data/sessions/run2": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z := newZeroDirs()
			c := &sessionCounter{z: z, walk: filepath.Clean(tt.walk)}
			for _, p := range tt.met {
				if dir, ok := strings.CutPrefix(p, "skip:"); ok {
					c.skipped(filepath.FromSlash(dir))
				} else {
					c.file(filepath.FromSlash(p))
				}
			}
			c.flush()
			for k, want := range tt.want {
				if got, ok := z.listed.Get(filepath.FromSlash(k)); !ok || got != want {
					t.Errorf("%s: counted %d (%v), want %d", k, got, ok, want)
				}
			}
			if z.listed.Len() != len(tt.want) {
				t.Errorf("counted %d run directories, want %d", z.listed.Len(), len(tt.want))
			}
		})
	}
}
