package web

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

func TestPageCache(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	var c pageCache[int]
	builds := 0
	build := func(v int) func() (int, error) {
		return func() (int, error) { builds++; return v, nil }
	}
	get := func(key string, v int) (int, bool) {
		t.Helper()
		got, cached, err := c.get(ctx, st, key, build(v))
		if err != nil {
			t.Fatal(err)
		}
		return got, cached
	}
	if v, cached := get("a", 1); v != 1 || cached {
		t.Errorf("first get: %d, %v", v, cached)
	}
	if v, cached := get("a", 2); v != 1 || !cached {
		t.Errorf("second get: %d, %v", v, cached)
	}
	// Bounded: the oldest key goes first.
	for i := range pagesKept {
		get(fmt.Sprint(i), i)
	}
	if _, cached := get("a", 3); cached {
		t.Error("the oldest entry was kept past the bound")
	}
	if _, cached := get(fmt.Sprint(pagesKept-1), 0); !cached {
		t.Error("a recent entry was dropped")
	}
	// A write empties the cache.
	put(t, st, "/w", agentRun("w", "m", true, "ok"))
	if _, cached := get(fmt.Sprint(pagesKept-1), 0); cached {
		t.Error("an entry survived a write")
	}
	// A value built while a write commits is not served afterwards.
	n := 0
	_, _, err := c.get(ctx, st, "during", func() (int, error) {
		n++
		put(t, st, fmt.Sprintf("/during%d", n), agentRun(fmt.Sprintf("d%d", n), "m", true, "ok"))
		return 1, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, cached := get("during", 2); cached {
		t.Error("a value built across a write was served")
	}
}

// Concurrent views and writes: each view gets its own key's value (and,
// run with -race, no access races).
func TestPageCacheConcurrent(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	var c pageCache[string]
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				key := fmt.Sprint(i % 5)
				got, _, err := c.get(ctx, st, key, func() (string, error) { return key, nil })
				if err != nil || got != key {
					t.Errorf("key %s: got %q, %v", key, got, err)
					return
				}
				if g == 0 && i%10 == 0 {
					tr := &trace.Trace{ID: fmt.Sprintf("c%d", i), Format: "codex", Source: "c"}
					tr.Append(trace.Step{Kind: trace.KindMessage, Text: "x"})
					if _, err := ingest.StoreFile(ctx, st, ingest.FileInfo{Path: fmt.Sprintf("/c%d", i), Hash: "h"}, tr); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
