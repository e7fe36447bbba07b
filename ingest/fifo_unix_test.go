//go:build unix

package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func mkfifo(t *testing.T, p string) string {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	return p
}

// paths runs Paths in the background and fails the test, rather than
// hanging it, when it does not return.
func paths(t *testing.T, ctx context.Context, ps []string, sink Sink) (Summary, []Issue, error) {
	t.Helper()
	type result struct {
		sum    Summary
		issues []Issue
		err    error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.sum, r.err = Paths(ctx, ps, sink, Options{Report: func(i Issue) { r.issues = append(r.issues, i) }})
		done <- r
	}()
	select {
	case r := <-done:
		return r.sum, r.issues, r.err
	case <-time.After(time.Minute):
		t.Fatal("Paths did not return")
		return Summary{}, nil, nil
	}
}

// A named pipe named on the command line is read as a stream, as standard
// input is: it is what a shell's <(zcat runs.jsonl.gz) gives.
func TestPathsNamedPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, filepath.Join(dir, "runs.jsonl"))
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		_, _ = f.WriteString(codexSample)
	}()
	sink := newMemSink()
	sum, issues, err := paths(t, context.Background(), []string{fifo}, sink)
	if err != nil || sum.Files != 1 || sum.Traces != 1 || sum.Errors != 0 {
		t.Fatalf("err %v, summary %+v, issues %v", err, sum, issues)
	}
	if tr := sink.traces["s1"]; tr == nil || tr.Source != fifo {
		t.Errorf("trace %+v", tr)
	}
	for key := range sink.hashes {
		if !strings.HasPrefix(key, "pipe:") {
			t.Errorf("the stream is known as %s, not by its content", key)
		}
	}
}

// So is the read end of a pipe, as /dev/fd/N names it.
func TestPathsPipeByDescriptor(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := "/dev/fd/" + strconv.Itoa(int(r.Fd()))
	if info, err := os.Stat(p); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		t.Skipf("%s is not a pipe here (%v)", p, err)
	}
	go func() {
		defer w.Close()
		_, _ = w.WriteString(codexSample)
	}()
	sink := newMemSink()
	sum, issues, err := paths(t, context.Background(), []string{p}, sink)
	if err != nil || sum.Traces != 1 || sink.traces["s1"] == nil {
		t.Fatalf("err %v, summary %+v, issues %v", err, sum, issues)
	}
}

// A named pipe nothing writes to is waited for, which is said, and the
// wait ends with the context (an interrupt), rather than never.
func TestPathsNamedPipeWithoutWriter(t *testing.T) {
	defer func(d time.Duration) { fifoNotice = d }(fifoNotice)
	fifoNotice = time.Millisecond
	fifo := mkfifo(t, filepath.Join(t.TempDir(), "quiet"))
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan struct{})
	sink := newMemSink()
	go func() {
		// Cancel once the wait is reported.
		<-waited
		cancel()
	}()
	var issues []Issue
	done := make(chan error, 1)
	go func() {
		_, err := Paths(ctx, []string{fifo}, sink, Options{Report: func(i Issue) {
			issues = append(issues, i)
			if strings.Contains(i.Message, "waiting for something to write") {
				close(waited)
			}
		}})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err %v, want the context's", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Paths did not return")
	}
	if len(issues) != 1 || issues[0].Severity != Notice || issues[0].Path != fifo {
		t.Errorf("issues %v", issues)
	}
}

// In a walk a named pipe is skipped, since nothing may ever write to it,
// and the rest is read.
func TestPathsNamedPipeInWalk(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.jsonl", codexSample)
	fifo := mkfifo(t, filepath.Join(dir, "b.jsonl"))
	symlink(t, "b.jsonl", filepath.Join(dir, "c.jsonl"))
	sum, issues, err := paths(t, context.Background(), []string{dir}, newMemSink())
	if err != nil || sum.Traces != 1 || sum.Skipped != 2 {
		t.Fatalf("err %v, summary %+v, issues %v", err, sum, issues)
	}
	want := []string{fifo + ": skipped: a named pipe, not a file (name it to read it)",
		filepath.Join(dir, "c.jsonl") + ": skipped: a symbolic link to a named pipe, not a file (name it to read it)"}
	for i, w := range want {
		if i >= len(issues) || issues[i].String() != w || issues[i].Severity != Notice {
			t.Errorf("issues %v, want %q", issues, w)
		}
	}
}

// Other special files named are refused, saying what they are.
func TestPathsDevice(t *testing.T) {
	if _, err := os.Stat(os.DevNull); err != nil {
		t.Skip(err)
	}
	sum, issues, err := paths(t, context.Background(), []string{os.DevNull}, newMemSink())
	if err != nil || sum.Errors != 1 || len(issues) != 1 || issues[0].String() != os.DevNull+": not read: a character device, not a file" {
		t.Errorf("err %v, summary %+v, issues %v", err, sum, issues)
	}
}
