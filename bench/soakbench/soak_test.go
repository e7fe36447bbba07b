package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The soak, CI-sized: 15 seconds of load with a kill every 2 seconds on
// average. Nothing acknowledged may be lost, and the run must have killed
// both the receiver and an ingest at least once to count.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak runs for 15 seconds")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "faultline")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/faultline").CombinedOutput(); err != nil {
		t.Fatalf("building faultline: %v\n%s", err, out)
	}
	cfg := config{Faultline: bin, Dir: dir, Duration: 15 * time.Second, KillEvery: 2 * time.Second, Seed: 1, MaxTraces: 1500, Progress: testWriter{t}}
	fig, err := soak(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	fig.print(testWriter{t})
	for _, l := range fig.losses() {
		t.Error(l)
	}
	if fig.ReceiverKills == 0 || fig.IngestKills == 0 {
		t.Errorf("killed the receiver %d times and an ingest %d times: the soak proved nothing", fig.ReceiverKills, fig.IngestKills)
	}
	if fig.Acked == 0 || fig.LateAcked.Load() == 0 || fig.LabelsSaved.Load() == 0 || fig.Generated == 0 {
		t.Errorf("%d traces and %d late spans acknowledged, %d labels saved, %d traces ingested: the load did not run",
			fig.Acked, fig.LateAcked.Load(), fig.LabelsSaved.Load(), fig.Generated)
	}
}

// testWriter logs each write as a line of the test's output.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
