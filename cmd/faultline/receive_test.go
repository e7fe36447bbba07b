package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a buffer a running command writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestReceiveCommand(t *testing.T) {
	c := newCLI(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"--db", c.db, "receive", "--addr", "127.0.0.1:0", "--root-wait", "10ms"}, strings.NewReader(""), &stdout, &stderr)
	}()
	listening := regexp.MustCompile(`listening on (http://\S+/v1/traces)`)
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		cancel()
		t.Fatalf("not listening: %s", stderr.String())
	}
	body, err := os.ReadFile("../../ingest/testdata/otlp/genai_current.json")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("post: %v %v", err, resp)
	}
	resp.Body.Close()
	for deadline := time.Now().Add(10 * time.Second); strings.Count(stdout.String(), "stored ") < 2 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if code := <-exit; code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "stored 5bf92f3577b34da6a3ce929d0e0e4737  gpt-4.1  3 steps  SYS-3 SYS-2") {
		t.Errorf("stdout: %s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "received 7 spans in 1 requests: stored 2 traces") {
		t.Errorf("stderr: %s", stderr.String())
	}

	out, _, _ := c.run("", "show", "--json", "4bf92f3577b34da6a3ce929d0e0e4736")
	var shown struct {
		Trace struct {
			Format string            `json:"format"`
			Source string            `json:"source"`
			Meta   map[string]string `json:"meta"`
		} `json:"trace"`
		Steps []struct {
			SpanID string `json:"span_id"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatal(err, out)
	}
	if shown.Trace.Format != "otlp-json" || !strings.HasPrefix(shown.Trace.Source, "otlp-http://127.0.0.1:") ||
		shown.Trace.Meta["otel.root_span_id"] != "00f067aa0ba902b7" || len(shown.Steps) != 7 || shown.Steps[4].SpanID != "2b3c4d5e6f708192" {
		t.Errorf("show: %s", out)
	}
}

// TestReceiveChild is the receiver of TestReceiveKill, in a process of its
// own: the test binary run again with FAULTLINE_RECEIVE_ARGS.
func TestReceiveChild(t *testing.T) {
	args := os.Getenv("FAULTLINE_RECEIVE_ARGS")
	if args == "" {
		t.Skip("a helper process of TestReceiveKill")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, strings.Split(args, "\n"), strings.NewReader(""), os.Stdout, os.Stderr))
}

// receiver is `faultline receive` in a child process.
type receiver struct {
	cmd            *exec.Cmd
	url            string
	stdout, stderr syncBuffer
}

func startReceiver(t *testing.T, args ...string) *receiver {
	t.Helper()
	r := &receiver{cmd: exec.Command(os.Args[0], "-test.run=^TestReceiveChild$")}
	r.cmd.Env = append(os.Environ(), "FAULTLINE_RECEIVE_ARGS="+strings.Join(args, "\n"))
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.cmd.Process.Kill(); r.cmd.Wait() })
	listening := regexp.MustCompile(`listening on (http://\S+/v1/traces)`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := listening.FindStringSubmatch(r.stderr.String()); m != nil {
			r.url = m[1]
			return r
		}
	}
	t.Fatalf("not listening: %s", r.stderr.String())
	return nil
}

// A trace answered 200 is lost when the receiver is killed before storing
// it, unless it runs with --spool: then it is stored when the receiver
// starts again, and the spool empties.
func TestReceiveKill(t *testing.T) {
	body, err := os.ReadFile("../../ingest/testdata/otlp/genai_current.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, durable := range []bool{false, true} {
		t.Run(fmt.Sprintf("durable=%v", durable), func(t *testing.T) {
			c := newCLI(t)
			spool := filepath.Join(t.TempDir(), "spool")
			args := func(rootWait string) []string {
				a := []string{"--db", c.db, "receive", "--addr", "127.0.0.1:0", "--root-wait", rootWait}
				if durable {
					a = append(a, "--spool", spool)
				}
				return a
			}
			// Acknowledged, and held: the root waits an hour for more spans.
			r := startReceiver(t, args("1h")...)
			resp, err := http.Post(r.url, "application/json", bytes.NewReader(body))
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("post: %v %v", err, resp)
			}
			resp.Body.Close()
			if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			r.cmd.Wait()

			r = startReceiver(t, args("10ms")...)
			if durable {
				for deadline := time.Now().Add(10 * time.Second); strings.Count(r.stdout.String(), "stored ") < 2 && time.Now().Before(deadline); {
					time.Sleep(10 * time.Millisecond)
				}
			} else {
				time.Sleep(300 * time.Millisecond)
			}
			r.cmd.Process.Signal(os.Interrupt)
			if err := r.cmd.Wait(); err != nil {
				t.Fatalf("%v: %s", err, r.stderr.String())
			}
			out, _, code := c.run("", "show", "--json", "4bf92f3577b34da6a3ce929d0e0e4736")
			var shown struct {
				Steps []struct{} `json:"steps"`
			}
			json.Unmarshal([]byte(out), &shown)
			switch {
			case durable && (code != exitOK || len(shown.Steps) != 7):
				t.Errorf("durable: the acknowledged trace was not stored after kill -9 (exit %d): %s\n%s", code, out, r.stderr.String())
			case !durable && code == exitOK:
				t.Errorf("default mode: the trace survived kill -9, which it does not promise; is the test still testing? %s", out)
			}
			if durable {
				if !strings.Contains(r.stderr.String(), "1 requests replayed from the spool") {
					t.Errorf("stderr: %s", r.stderr.String())
				}
				if files, _ := filepath.Glob(filepath.Join(spool, "*")); len(files) != 0 {
					t.Errorf("the spool holds %v once its traces are stored", files)
				}
			}
		})
	}
}
