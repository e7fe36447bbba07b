package sqlite

import (
	"context"
	"errors"
	"testing"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/store"
)

// A Batch reads a trace written through it before it is committed (the
// receiver asks, before each trace, whether it merges into a stored one),
// and the trace read is committed: another connection sees it.
func TestBatchLoadSeesItsOpenTransaction(t *testing.T) {
	ctx := context.Background()
	st, other := openTwice(t)
	b := st.Batch()
	defer b.Close(ctx)
	if _, err := b.Load(ctx, "t1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("before any write: %v, want ErrNotFound", err)
	}
	if _, err := ingest.StoreFile(ctx, b, ingest.FileInfo{Path: "otlp:t1", Hash: "h", Format: "codex"}, sample("t1", "m", nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Load(ctx, "t2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a trace not written: %v, want ErrNotFound", err)
	}
	got, err := b.Load(ctx, "t1")
	if err != nil || len(got.Steps) != 3 || len(got.Findings) != 1 {
		t.Fatalf("the trace written: %+v, %v", got, err)
	}
	if got, err := other.Load(ctx, "t1"); err != nil || len(got.Steps) != 3 {
		t.Fatalf("read elsewhere after the batch read it: %v", err)
	}
}

// Commit says whether everything written since the last Commit is stored:
// a transaction rolled back in between is reported once, and the batch
// goes on writing.
func TestBatchCommitReportsLossOnce(t *testing.T) {
	ctx := context.Background()
	st := open(t)
	b := st.Batch()
	defer b.Close(ctx)
	write := func(id string, ctx context.Context) {
		t.Helper()
		fs, err := b.File(ctx, ingest.FileInfo{Path: "otlp:" + id, Hash: "h", Format: "codex"})
		if err != nil || fs == nil {
			t.Fatalf("File: %v", err)
		}
		if err := fs.Trace(ctx, sample(id, "m", nil)); err != nil {
			t.Fatal(err)
		}
		if err := fs.Close(ctx, ingest.FileResult{Err: ctx.Err()}); err != nil {
			t.Fatal(err)
		}
	}
	write("kept", ctx)
	if err := b.Commit(ctx); err != nil {
		t.Fatalf("first commit: %v", err)
	}
	// Interrupted: the file's close rolls the open transaction back.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	fs, err := b.File(ctx, ingest.FileInfo{Path: "otlp:lost", Hash: "h", Format: "codex"})
	if err != nil || fs == nil {
		t.Fatalf("File: %v", err)
	}
	if err := fs.Trace(ctx, sample("lost", "m", nil)); err != nil {
		t.Fatal(err)
	}
	fs.Close(cancelled, ingest.FileResult{Err: cancelled.Err()})
	if err := b.Commit(ctx); err == nil {
		t.Fatal("a rolled back transaction is not reported")
	}
	write("lost", ctx)
	if err := b.Commit(ctx); err != nil {
		t.Fatalf("the loss reported again: %v", err)
	}
	for _, id := range []string{"kept", "lost"} {
		if _, err := st.Load(ctx, id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}
