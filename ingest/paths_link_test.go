package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

// symlink makes a symbolic link, or skips the test where links cannot be
// made.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
}

// A walk follows links to files (git-annex and DVC keep data as links into
// their stores), reads a file two links lead to once, does not follow links
// to directories (so a walk cannot loop), and says why it skips anything.
func TestPathsSymlinks(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	root := filepath.Join(dir, "runs")
	write(t, dir, "runs/real.jsonl", codexSample)
	// git-annex: the content in a hidden store, the name a link to it.
	write(t, dir, "runs/.git/annex/objects/Xk/MD5E-s1--ab/MD5E-s1--ab.jsonl", strings.Replace(codexSample, `"id":"s1"`, `"id":"annexed"`, 1))
	symlink(t, filepath.Join(".git", "annex", "objects", "Xk", "MD5E-s1--ab", "MD5E-s1--ab.jsonl"), filepath.Join(root, "annexed.jsonl"))
	// DVC's cache outside the tree, linked twice.
	cached := write(t, outside, "cache/ab/cdef", strings.Replace(codexSample, `"id":"s1"`, `"id":"cached"`, 1))
	symlink(t, cached, filepath.Join(root, "a-cached.jsonl"))
	symlink(t, cached, filepath.Join(root, "b-cached.jsonl"))
	symlink(t, "real.jsonl", filepath.Join(root, "same.jsonl"))
	symlink(t, "missing.jsonl", filepath.Join(root, "dangling.jsonl"))
	symlink(t, "loop.jsonl", filepath.Join(root, "loop.jsonl"))
	symlink(t, "..", filepath.Join(root, "up"))
	symlink(t, outside, filepath.Join(root, "cache-dir"))

	var issues []string
	sink := newMemSink()
	sum, err := Paths(context.Background(), []string{root}, sink, Options{Report: func(i Issue) { issues = append(issues, i.Severity.String()+" "+i.String()) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"s1", "annexed", "cached"} {
		if sink.traces[id] == nil {
			t.Errorf("trace %s not read; traces %v", id, sink.traces)
		}
	}
	if src := sink.traces["cached"].Source; src != filepath.Join(root, "a-cached.jsonl") {
		t.Errorf("the cached file is read as %s, not its first link", src)
	}
	all := strings.Join(issues, "\n")
	for _, want := range []string{
		"notice " + filepath.Join(root, "b-cached.jsonl") + ": skipped: a symbolic link to " + filepath.Join(root, "a-cached.jsonl") + ", read there",
		"notice " + filepath.Join(root, "same.jsonl") + ": skipped: a symbolic link to " + filepath.Join(root, "real.jsonl") + ", read there",
		"error " + filepath.Join(root, "dangling.jsonl") + ": cannot read: a symbolic link to missing.jsonl, which does not exist",
		"error " + filepath.Join(root, "loop.jsonl") + ": cannot read: a symbolic link to loop.jsonl: ",
		"notice " + filepath.Join(root, "up") + ": skipped: a symbolic link to a directory, not followed in a walk",
		"notice " + filepath.Join(root, "cache-dir") + ": skipped: a symbolic link to a directory, not followed in a walk",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("issues lack %q:\n%s", want, all)
		}
	}
	if sum.Files != 3 || sum.Skipped != 4 || sum.Errors != 2 || len(sum.SkippedFiles) != 4 {
		t.Errorf("summary %+v", sum)
	}

	// Named on the command line, a link to a file or a directory is read.
	sink = newMemSink()
	sum, _ = Paths(context.Background(), []string{filepath.Join(root, "b-cached.jsonl"), filepath.Join(root, "cache-dir")}, sink, Options{})
	if sum.Files != 2 || sink.traces["cached"] == nil {
		t.Errorf("links named: %+v", sum)
	}
	// And one to nothing says so.
	issues = nil
	Paths(context.Background(), []string{filepath.Join(root, "dangling.jsonl")}, newMemSink(), Options{Report: func(i Issue) { issues = append(issues, i.String()) }})
	if len(issues) != 1 || !strings.Contains(issues[0], "a symbolic link to missing.jsonl, which does not exist") {
		t.Errorf("a dangling link named: %q", issues)
	}
}

// Decoding stopped by something other than the content (here the sink)
// says how far into the file it had read.
func TestPathsDecodingStoppedSaysWhere(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "a.jsonl", codexSample+strings.Replace(codexSample, `"id":"s1"`, `"id":"s2"`, 1))
	var issues []Issue
	sum, err := Paths(context.Background(), []string{p}, failingSink{}, Options{Report: func(i Issue) { issues = append(issues, i) }})
	if err != nil || sum.Errors != 1 || len(issues) != 1 {
		t.Fatalf("err %v, summary %+v, issues %v", err, sum, issues)
	}
	if i := issues[0]; i.Line < 2 || !strings.HasPrefix(i.Message, "decoding stopped after byte ") || !strings.HasSuffix(i.Message, ": the sink is full") {
		t.Errorf("issue %s", i)
	}
}

type failingSink struct{}

func (failingSink) File(context.Context, FileInfo) (FileSink, error) { return failingSink{}, nil }
func (failingSink) Close(context.Context, FileResult) error          { return nil }
func (failingSink) Trace(context.Context, *trace.Trace) error        { return errors.New("the sink is full") }
