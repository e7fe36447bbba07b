package sqlite

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/store"
)

// A Batch stores the traces of many files in shared transactions: what it
// closes is stored whole, searchable, and each file recorded, so a second
// pass over the same files writes nothing.
func TestBatchStoresManyFiles(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	b := st.Batch()
	for i := range 30 {
		tr := sample(fmt.Sprintf("t%02d", i), "m", nil)
		stored, err := ingest.StoreFile(ctx, b, ingest.FileInfo{Path: fmt.Sprintf("f%02d.jsonl", i), Hash: "h", Format: "codex"}, tr)
		if err != nil || !stored {
			t.Fatalf("file %d: stored %v, %v", i, stored, err)
		}
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := st.Count(ctx, store.TraceQuery{}); err != nil || n != 30 {
		t.Fatalf("stored %d traces (%v), want 30", n, err)
	}
	hits, err := st.SearchHits(ctx, "go", []string{"t00", "t29"})
	if err != nil || len(hits) != 2 {
		t.Fatalf("search found %d of 2 traces (%v)", len(hits), err)
	}
	again := st.Batch()
	defer again.Close(ctx)
	if fs, err := again.File(ctx, ingest.FileInfo{Path: "f07.jsonl", Hash: "h", Format: "codex"}); err != nil || fs != nil {
		t.Fatalf("a recorded file is offered again (%v)", err)
	}
}

// An interrupted Batch loses its open transaction whole: none of its traces
// is stored and none of its files recorded, so the next ingest reads them
// again; what it committed before stays.
func TestInterruptedBatchLosesOnlyItsOpenTransaction(t *testing.T) {
	st := open(t)
	ctx := context.Background()
	if !ingestFile(t, st, "done.jsonl", "h", sample("done", "m", nil)) {
		t.Fatal("not stored")
	}
	cancelled, cancel := context.WithCancel(ctx)
	b := st.Batch()
	fs, err := b.File(cancelled, ingest.FileInfo{Path: "open.jsonl", Hash: "h", Format: "codex"})
	if err != nil || fs == nil {
		t.Fatalf("File: %v", err)
	}
	if err := fs.Trace(cancelled, sample("open", "m", nil)); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := fs.Close(cancelled, ingest.FileResult{Err: cancelled.Err()}); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(cancelled); err != nil {
		t.Fatal(err)
	}
	if n, err := st.Count(ctx, store.TraceQuery{}); err != nil || n != 1 {
		t.Fatalf("stored %d traces (%v), want only the committed one", n, err)
	}
	if !ingestFile(t, st, "open.jsonl", "h", sample("open", "m", nil)) {
		t.Fatal("the interrupted file was recorded and not read again")
	}
}

// Files written through one Batch from several goroutines at once, as a
// walk with workers writes them, are all stored and recorded.
func TestBatchTakesFilesFromSeveralGoroutines(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	b := st.Batch()
	errs := make(chan error, 3)
	for g := range 3 {
		go func() {
			for i := range 20 {
				id := fmt.Sprintf("g%d-%02d", g, i)
				if _, err := ingest.StoreFile(ctx, b, ingest.FileInfo{Path: id + ".jsonl", Hash: "h", Format: "codex"}, sample(id, "m", nil)); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := st.Count(ctx, store.TraceQuery{}); err != nil || n != 60 {
		t.Fatalf("stored %d traces (%v), want 60", n, err)
	}
}

// A Batch looks a file up without waiting for its writer, which a commit
// holds: it reads what is committed.
func TestBatchLooksFilesUpBesideItsWriter(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	if !ingestFile(t, st, "done.jsonl", "h", sample("done", "m", nil)) {
		t.Fatal("not stored")
	}
	b := st.Batch()
	defer b.Close(ctx)
	fs, err := b.File(ctx, ingest.FileInfo{Path: "open.jsonl", Hash: "h", Format: "codex"})
	if err != nil || fs == nil {
		t.Fatalf("File: %v", err)
	}
	if err := fs.Trace(ctx, sample("open", "m", nil)); err != nil {
		t.Fatal(err)
	}
	if err := fs.Close(ctx, ingest.FileResult{}); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock() // as a commit holds it
	type lookup struct {
		fs  ingest.FileSink
		err error
	}
	done := make(chan lookup, 2)
	for _, path := range []string{"done.jsonl", "open.jsonl"} {
		go func() {
			fs, err := b.File(ctx, ingest.FileInfo{Path: path, Hash: "h", Format: "codex"})
			done <- lookup{fs, err}
		}()
	}
	var got []lookup
	for range 2 {
		select {
		case l := <-done:
			got = append(got, l)
		case <-time.After(10 * time.Second):
			b.mu.Unlock()
			t.Fatal("a file lookup waited for the batch's writer")
		}
	}
	b.mu.Unlock()
	unchanged := 0
	for _, l := range got {
		if l.err != nil {
			t.Fatal(l.err)
		}
		if l.fs == nil {
			unchanged++
		}
	}
	// The committed file is unchanged; the one in the open transaction is
	// not committed, so it is offered again.
	if unchanged != 1 {
		t.Errorf("%d of the two files unchanged, want the committed one", unchanged)
	}
}
