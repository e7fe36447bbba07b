package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
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
