package postgres

import (
	"context"
	"testing"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/store/postgres/pgtest"
	"github.com/faultline/faultline/trace"
)

// TestRevisionAcrossProcesses moves one server's cached pages when another
// process writes: two stores open on one database stand for two serve (or
// serve and receive) processes.
func TestRevisionAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	reader, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	writer, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	before, err := reader.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// (Whether a read leaves it alone is not asked here: the revision is the
	// server's snapshot, which other databases' writes move too.)
	tr := &trace.Trace{ID: "t1", Format: "codex", Source: "x.jsonl", Model: "m"}
	tr.Append(trace.Step{Kind: trace.KindMessage, Role: "user", Text: "go"})
	if _, err := ingest.StoreFile(ctx, writer, ingest.FileInfo{Path: "/x.jsonl", Hash: "h", Format: "codex"}, tr); err != nil {
		t.Fatal(err)
	}
	if after, _ := reader.Revision(ctx); after == before {
		t.Errorf("another process's write left the revision at %q", after)
	}
}
