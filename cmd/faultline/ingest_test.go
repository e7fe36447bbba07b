package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/shared"
)

// rollout019 is a real Codex rollout, trace 019bc2a7…, of some 56 steps;
// its first 20 lines hold a handful of them.
const (
	rollout019 = "itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1/sessions/2026/01/15/rollout-2026-01-15T12-15-06-019bc2a7-59dc-7430-8569-ef3779936830.jsonl"
	trace019   = "019bc2a7-59dc-7430-8569-ef3779936830"
)

// firstLines returns the first n lines of the file at path.
func firstLines(t *testing.T, path string, n int) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	return strings.Join(lines[:n], "")
}

// storedSteps returns the stored step count of a trace, and the file it was
// read from.
func (c *cli) storedSteps(id string) (int, string) {
	c.t.Helper()
	out, errOut, code := c.run("", "ls", "--json")
	var list []struct {
		ID     string `json:"id"`
		Steps  int    `json:"steps"`
		Source string `json:"source"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || code != exitOK {
		c.t.Fatalf("ls: exit %d, %v\n%s", code, err, errOut)
	}
	for _, s := range list {
		if s.ID == id {
			return s.Steps, s.Source
		}
	}
	c.t.Fatalf("trace %s is not stored", id)
	return 0, ""
}

// A truncated copy of a real rollout, or the rollout cut short where it
// lies, does not replace the stored trace unless --replace says so, through
// every command that ingests.
func TestIngestRefusesFewerSteps(t *testing.T) {
	real := shared.Path(t, rollout019)
	cut := firstLines(t, real, 20)
	// The step counts are the decoder's: FULL and CUT stand for them below.
	cutPath := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(cutPath, []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	cutTraces, _, err := ingest.ReadAll(context.Background(), []string{cutPath}, ingest.Options{})
	if err != nil || len(cutTraces) != 1 || cutTraces[0].ID != trace019 {
		t.Fatalf("reading the cut rollout: %v, %d traces", err, len(cutTraces))
	}
	cutSteps := len(cutTraces[0].Steps)
	tests := []struct {
		name     string
		inPlace  bool     // the rollout ingested first is a copy, then cut short where it lies
		command  []string // ingests the cut version, whose path is appended
		wantCode int
		wantCut  bool     // the cut version is stored afterwards
		wantOut  []string // in its output, stdout and stderr
	}{
		{"a truncated copy", false, []string{"ingest"}, exitDataError, false, []string{
			"error: DIR/copy.jsonl: trace " + trace019 + ": FULL steps are stored (from REAL); this file has CUT; not replaced, since that would lose LOST steps (a truncated copy?). Use --replace to replace it\n",
			"ingested 0 traces from 1 file, 1 refused, 1 error",
		}},
		{"the rollout cut short", true, []string{"ingest"}, exitDataError, false, []string{
			"error: DIR/rollout.jsonl: trace " + trace019 + ": FULL steps are stored (from an earlier version of this file); this file has CUT; not replaced, since that would lose LOST steps (was it cut short?). Use --replace to replace it\n",
		}},
		{"a truncated copy, replacing", false, []string{"ingest", "--replace"}, exitOK, true, []string{
			"ingested 1 trace from 1 file, 1 replaced with fewer steps, 0 errors",
		}},
		{"the rollout cut short, replacing", true, []string{"ingest", "--replace"}, exitOK, true, nil},
		{"analyze", false, []string{"analyze"}, exitDataError, false, []string{"(a truncated copy?). Use --replace to replace it\n", "1 refused"}},
		{"analyze, replacing", false, []string{"analyze", "--replace"}, exitOK, true, []string{"1 replaced with fewer steps"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			first, second := real, filepath.Join(dir, "copy.jsonl")
			if tt.inPlace {
				first = filepath.Join(dir, "rollout.jsonl")
				second = first
				whole, err := os.ReadFile(real)
				if err == nil {
					err = os.WriteFile(first, whole, 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			c := newCLI(t)
			if _, errOut, code := c.run("", "ingest", "-q", first); code != exitOK {
				t.Fatalf("ingest: exit %d\n%s", code, errOut)
			}
			fullSteps, _ := c.storedSteps(trace019)
			if fullSteps < 50 || fullSteps <= cutSteps {
				t.Fatalf("%d steps stored, and %d in the first 20 lines", fullSteps, cutSteps)
			}
			if err := os.WriteFile(second, []byte(cut), 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := c.run("", append(tt.command, second)...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\n%s", code, tt.wantCode, errOut)
			}
			for _, want := range tt.wantOut {
				want = strings.NewReplacer("DIR", dir, "REAL", real, "FULL", fmt.Sprint(fullSteps),
					"CUT", fmt.Sprint(cutSteps), "LOST", fmt.Sprint(fullSteps-cutSteps)).Replace(want)
				if !strings.Contains(out+errOut, want) {
					t.Errorf("output lacks %q:\n%s%s", want, out, errOut)
				}
			}
			wantSteps, wantSource := fullSteps, first
			if tt.wantCut {
				wantSteps, wantSource = cutSteps, second
			}
			if steps, source := c.storedSteps(trace019); steps != wantSteps || source != wantSource {
				t.Errorf("%d steps stored from %s, want %d from %s", steps, source, wantSteps, wantSource)
			}
		})
	}
}

// ingest --json counts refused and replaced traces, and a file with a
// refused trace is read again rather than skipped as unchanged.
func TestIngestJSONCountsFewerSteps(t *testing.T) {
	real := shared.Path(t, rollout019)
	copyPath := filepath.Join(t.TempDir(), "copy.jsonl")
	if err := os.WriteFile(copyPath, []byte(firstLines(t, real, 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	if _, errOut, code := c.run("", "ingest", "-q", real); code != exitOK {
		t.Fatalf("ingest: exit %d\n%s", code, errOut)
	}
	type result struct {
		Files, Unchanged, Traces, Refused, Replaced, Errors int
		TraceIDs                                            []string `json:"trace_ids"`
	}
	tests := []struct {
		name string
		args []string
		code int
		want result
	}{
		{"refused", nil, exitDataError, result{Files: 1, Refused: 1, Errors: 1, TraceIDs: []string{}}},
		{"refused again, not unchanged", nil, exitDataError, result{Files: 1, Refused: 1, Errors: 1, TraceIDs: []string{}}},
		{"replaced", []string{"--replace"}, exitOK, result{Files: 1, Traces: 1, Replaced: 1, TraceIDs: []string{trace019}}},
		{"then unchanged", []string{"--replace"}, exitOK, result{Unchanged: 1, TraceIDs: []string{}}},
	}
	for _, tt := range tests {
		out, errOut, code := c.run("", append(append([]string{"ingest", "--json"}, tt.args...), copyPath)...)
		var got result
		if err := json.Unmarshal([]byte(out), &got); err != nil || code != tt.code {
			t.Fatalf("%s: exit %d, %v\n%s%s", tt.name, code, err, out, errOut)
		}
		if strings.Join(got.TraceIDs, ",") != strings.Join(tt.want.TraceIDs, ",") || got.TraceIDs == nil {
			t.Errorf("%s: trace_ids %v, want %v", tt.name, got.TraceIDs, tt.want.TraceIDs)
		}
		got.TraceIDs = tt.want.TraceIDs
		if got.Files != tt.want.Files || got.Unchanged != tt.want.Unchanged || got.Traces != tt.want.Traces ||
			got.Refused != tt.want.Refused || got.Replaced != tt.want.Replaced || got.Errors != tt.want.Errors {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
		for _, field := range []string{`"refused":`, `"replaced":`} {
			if !strings.Contains(out, field) {
				t.Errorf("%s: no %s field in\n%s", tt.name, field, out)
			}
		}
	}
}

// Every command that ingests takes --replace.
func TestReplaceFlagOnEveryIngestingCommand(t *testing.T) {
	for _, command := range []string{"ingest", "analyze", "check", "eval"} {
		out, _, code := newCLI(t).run("", command, "--help")
		if code != exitOK || !strings.Contains(out, "--replace") {
			t.Errorf("%s --help: exit %d, no --replace:\n%s", command, code, out)
		}
	}
}

// --text-limit-kib cuts a long text to its head and tail, and the trace
// says how long it was; a negative limit keeps it whole.
func TestIngestTextLimit(t *testing.T) {
	long := strings.Repeat("0123456789", 1000) // 10,000 bytes
	line := `{"id": "conv-long", "model": "m", "messages": [{"role": "user", "content": "go"}, {"role": "assistant", "content": "` + long + `"}]}` + "\n"
	for _, tc := range []struct {
		limit string
		cut   bool
	}{{"1", true}, {"-1", false}} {
		c := newCLI(t)
		path := filepath.Join(t.TempDir(), "long.jsonl")
		if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, stderr, code := c.run("", "ingest", "-q", "--text-limit-kib", tc.limit, path); code != exitOK {
			t.Fatalf("limit %s: exit %d: %s", tc.limit, code, stderr)
		}
		out, _, _ := c.run("", "show", "--json", "chat:conv-long")
		var shown struct {
			Trace struct {
				Meta map[string]string `json:"meta"`
			} `json:"trace"`
			Steps []struct {
				Text string `json:"text"`
			} `json:"steps"`
		}
		if err := json.Unmarshal([]byte(out), &shown); err != nil {
			t.Fatalf("limit %s: %v\n%s", tc.limit, err, out)
		}
		text := shown.Steps[len(shown.Steps)-1].Text
		if cut := len(text) < len(long); cut != tc.cut || (tc.cut && (!strings.HasPrefix(text, "0123") || !strings.HasSuffix(text, "6789") || len(text) > 1200)) {
			t.Errorf("limit %s KiB: kept %d of %d bytes", tc.limit, len(text), len(long))
		}
		if tc.cut && !strings.Contains(shown.Trace.Meta["cut_texts"], "=10000") {
			t.Errorf("limit %s KiB: meta %v does not record the size", tc.limit, shown.Trace.Meta)
		}
	}
}
