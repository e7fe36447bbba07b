package main

import (
	"encoding/json"
	"sync"
	"testing"
)

// Two ingests on one database both store everything: the second waits its
// turn for SQLite's write lock instead of failing with "database is
// locked", and neither holds the lock for a whole file.
func TestConcurrentIngests(t *testing.T) {
	c := newCLI(t)
	var wg sync.WaitGroup
	codes := make([]int, 2)
	errs := make([]string, 2)
	for i, path := range []string{examples, "../../ingest/testdata/samples"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i], codes[i] = c.run("", "ingest", "-q", path)
		}()
	}
	wg.Wait()
	for i := range codes {
		if codes[i] != exitOK {
			t.Errorf("ingest %d: exit %d: %s", i, codes[i], errs[i])
		}
	}
	out, _, _ := c.run("", "ls", "--json")
	var traces []map[string]any
	if err := json.Unmarshal([]byte(out), &traces); err != nil {
		t.Fatal(err)
	}
	// The examples' 12 traces and every sample's.
	alone := newCLI(t)
	alone.run("", "ingest", "-q", "../../ingest/testdata/samples")
	out, _, _ = alone.run("", "ls", "--json")
	var samples []map[string]any
	json.Unmarshal([]byte(out), &samples)
	if len(samples) == 0 || len(traces) != 12+len(samples) {
		t.Errorf("%d traces stored, want 12 + %d", len(traces), len(samples))
	}
}
