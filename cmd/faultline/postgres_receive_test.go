package main

import (
	"bytes"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/faultline/faultline/internal/store/postgres/pgtest"
)

// TestReceiveOnPostgres receives the same requests into PostgreSQL and into
// SQLite, the second a retry of the first, and expects the same traces
// stored and the same account of what was received.
func TestReceiveOnPostgres(t *testing.T) {
	body, err := os.ReadFile("../../ingest/testdata/otlp/genai_current.json")
	if err != nil {
		t.Fatal(err)
	}
	var summaries, lists []string
	for _, c := range []*cli{newCLI(t), {t: t, db: pgtest.Database(t)}} {
		stdout, stderr := receiveTwice(t, c, body)
		if !strings.Contains(stdout, "stored 5bf92f3577b34da6a3ce929d0e0e4737  gpt-4.1  3 steps  SYS-3 SYS-2") {
			t.Errorf("stdout: %s", stdout)
		}
		summary := regexp.MustCompile(`received .*`).FindString(stderr)
		out, errOut, code := c.run("", "ls")
		if code != exitOK {
			t.Fatalf("ls: %s", errOut)
		}
		summaries, lists = append(summaries, summary), append(lists, out)
	}
	if summaries[0] != summaries[1] || lists[0] != lists[1] {
		t.Errorf("SQLite and PostgreSQL received differently:\n%s\n%s\n%s%s", summaries[0], summaries[1], lists[0], lists[1])
	}
}

// receiveTwice runs faultline receive, posts body to it twice, and returns
// what it printed once stopped.
func receiveTwice(t *testing.T, c *cli, body []byte) (string, string) {
	r := startReceiver(t, "--db", c.db, "receive", "--addr", "127.0.0.1:0", "--root-wait", "10ms")
	for range 2 {
		resp, err := http.Post(r.url, "application/json", bytes.NewReader(body))
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("post: %v %v", err, resp)
		}
		resp.Body.Close()
		for deadline := time.Now().Add(10 * time.Second); strings.Count(r.stdout.String(), "stored ") < 2 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := r.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("receive: %v: %s", err, r.stderr.String())
	}
	return r.stdout.String(), r.stderr.String()
}
