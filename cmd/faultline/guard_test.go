package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/faultline/faultline/internal/store/sqlite"
)

func TestGuardCommand(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices": [{"index": 0, "message": {"role": "assistant", "content": "which one?"}}], "usage": {"total_tokens": 9}}`)
	}))
	defer upstream.Close()
	dir := t.TempDir()
	policyFile, decisions := filepath.Join(dir, "guard.yaml"), filepath.Join(dir, "decisions.jsonl")
	if err := os.WriteFile(policyFile, []byte(`name: test
rules:
  - name: ambiguous-task
    signals: ['(?i)\beither\b']
    action: annotate
`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"--db", c.db, "guard", "--upstream", upstream.URL, "--listen", "127.0.0.1:0", "--policy", policyFile, "--decisions", decisions}, strings.NewReader(""), &stdout, &stderr)
	}()
	listening := regexp.MustCompile(`listening on (http://\S+),`)
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
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(`{"model": "m", "messages": [{"role": "user", "content": "restart either pod"}]}`))
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("X-Faultline-Session", "cli")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Faultline-Guard") != "rule=ambiguous-task mode=FM-2.2 action=annotate" {
		t.Errorf("status %d, headers %v: want 200 annotated", resp.StatusCode, resp.Header)
	}
	cancel()
	if code := <-exit; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "guarded 1 requests: 1 decisions") {
		t.Errorf("stderr %q: want the counts", stderr.String())
	}
	log, err := os.ReadFile(decisions)
	if err != nil || strings.Count(string(log), "\n") != 1 || !strings.Contains(string(log), `"rule":"ambiguous-task"`) {
		t.Errorf("decisions %q (%v): want one line", log, err)
	}
	st, err := sqlite.Open(context.Background(), c.db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run, err := st.Load(context.Background(), "guard:cli")
	if err != nil {
		t.Fatal(err)
	}
	findings, err := st.Findings(context.Background(), "guard:cli")
	if err != nil {
		t.Fatal(err)
	}
	if run.Format != "guard" || len(run.Steps) != 2 || len(findings) != 1 || findings[0].Source != "guard" {
		t.Errorf("stored a %s run of %d steps with findings %+v: want a guard run of 2 steps and its decision", run.Format, len(run.Steps), findings)
	}
}
