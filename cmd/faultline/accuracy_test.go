package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/shared"
)

// TestAccuracyTableIsCurrent holds the README's "Detector accuracy on real
// traces" tables to what eval prints now, so that a detector change that
// moves them cannot land with stale figures. bench/accuracy.sh rewrites
// them.
func TestAccuracyTableIsCurrent(t *testing.T) {
	runs := shared.Path(t, "itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1")
	chats := shared.Path(t, "samples/ag2/raw_ag2_records.json")
	c := newCLI(t)
	out, errOut, code := c.run("", "-q", "eval", "--markdown", "--bootstrap", "0", "--ingest", runs, "--ingest", chats, "--labels", "../../testdata/labels/real.jsonl")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "<!-- accuracy:start -->\n")
	published, _, ok2 := strings.Cut(rest, "<!-- accuracy:end -->")
	if !ok || !ok2 {
		t.Fatal("README.md has no accuracy markers")
	}
	if published != out {
		t.Errorf("the README's accuracy tables are stale: run bench/accuracy.sh\n--- now\n%s", out)
	}
	// Every detector that fires on these traces meets the precision goal:
	// the detector table's rows, | detector | mode | n | TP | FP | FN |
	// precision | recall | at a labelled step |.
	detectors := 0
	for _, line := range strings.Split(out, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 11 || !strings.HasPrefix(strings.TrimSpace(cells[2]), "FM-") && !strings.HasPrefix(strings.TrimSpace(cells[2]), "SYS-") {
			continue
		}
		detectors++
		if p, err := strconv.ParseFloat(strings.TrimSpace(cells[7]), 64); err == nil && p < 0.8 {
			t.Errorf("detector below precision 0.8 on the labelled real traces: %s", line)
		}
	}
	if detectors < 20 {
		t.Errorf("%d detector rows read from the tables, want one per detector", detectors)
	}
}
