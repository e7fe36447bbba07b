package ingest

import (
	"bytes"
	"compress/gzip"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func gzipped(t *testing.T, parts ...string) string {
	t.Helper()
	var b bytes.Buffer
	for _, p := range parts { // one gzip member each
		zw := gzip.NewWriter(&b)
		if _, err := zw.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// Any format is read through gzip, sniffed on what the compression holds;
// a broken stream is reported at its file and loses nothing else.
func TestGzipInput(t *testing.T) {
	dir := t.TempDir()
	half := strings.Index(codexSample, "\n") + 1
	whole := gzipped(t, codexSample)
	cases := []struct {
		name, content string
		traces, steps int
		issue         string
	}{
		{"plain.jsonl", codexSample, 1, -1, ""},
		{"one-member.jsonl.gz", whole, 1, -1, ""},
		{"two-members.jsonl.gz", gzipped(t, codexSample[:half], codexSample[half:]), 1, -1, ""},
		{"notes.txt.gz", gzipped(t, "just some notes\n"), 0, 0, "unrecognised format"},
		{"garbage.gz", "\x1f\x8b\x08garbage", 0, 0, "cannot read: gzip:"},
		{"cut.jsonl.gz", whole[:len(whole)*2/3], 1, -1, "the gzip stream is broken (unexpected EOF); what came before it is read"},
	}
	var plainSteps int
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, dir, tc.name, tc.content)
			var issues []string
			sink := newMemSink()
			sum, err := Paths(context.Background(), []string{path}, sink, Options{Report: func(i Issue) { issues = append(issues, i.String()) }})
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(issues, "\n")
			if tc.issue == "" && len(issues) > 0 || tc.issue != "" && !strings.Contains(all, path+": "+tc.issue) {
				t.Errorf("issues %q, want %q at %s", all, tc.issue, filepath.Base(path))
			}
			if sum.Traces != tc.traces {
				t.Fatalf("%d traces, want %d", sum.Traces, tc.traces)
			}
			tr := sink.traces["s1"]
			switch {
			case tc.traces == 0:
			case tc.name == "plain.jsonl":
				plainSteps = len(tr.Steps)
			case tc.name == "cut.jsonl.gz":
				if len(tr.Steps) == 0 || len(tr.Steps) >= plainSteps {
					t.Errorf("the cut stream gave %d steps, want some of %d", len(tr.Steps), plainSteps)
				}
			case len(tr.Steps) != plainSteps || tr.Format != "codex":
				t.Errorf("%d %s steps, want the plain file's %d", len(tr.Steps), tr.Format, plainSteps)
			}
		})
	}
}
