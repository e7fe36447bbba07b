package receive

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/faultline/faultline/internal/store/sqlite"
	"github.com/faultline/faultline/trace"
)

// grouped is a receiver storing into SQLite as faultline receive does:
// through a Batch, traces sharing commits. Its Detect waits for open
// before it maps the first trace, so that what the test sends meanwhile
// is queued behind it, in its group; commit stands in for the Batch's
// Commit, which it is given.
type grouped struct {
	*running
	st    *sqlite.Store
	open  chan struct{}
	mu    sync.Mutex
	calls int // Commit calls
}

func startGrouped(t *testing.T, commit func(ctx context.Context, b *sqlite.Batch, call int) error) *grouped {
	t.Helper()
	// Every group of the test is whole, whatever the machine's speed.
	was := groupTime
	groupTime = time.Hour
	t.Cleanup(func() { groupTime = was })
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b := st.Batch()
	t.Cleanup(func() { b.Close(ctx) })
	g := &grouped{st: st, open: make(chan struct{})}
	var first sync.Once
	g.running = start(t, Config{Sink: b, Loader: b, RootWait: 5 * time.Millisecond,
		Commit: func(ctx context.Context) error {
			g.mu.Lock()
			g.calls++
			call := g.calls
			g.mu.Unlock()
			return commit(ctx, b, call)
		},
		Detect: func(*trace.Trace) { first.Do(func() { <-g.open }) }})
	return g
}

// send posts runs of 4 spans for ids, one request each, and waits until
// the receiver holds them all queued: from the root (first 1: 3 steps
// under it), or later spans under it (4 steps).
func (g *grouped) send(t *testing.T, ids []pcommon.TraceID, first byte) {
	t.Helper()
	want := g.r.Stats().Waiting + len(ids)
	for _, id := range ids {
		if resp, body := post(t, g.addr, "application/x-protobuf", run(id, 4, first)); resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	}
	waitFor(t, "the traces queued", func() bool { return g.r.Stats().Waiting == want })
}

func traceIDs(n int) []pcommon.TraceID {
	ids := make([]pcommon.TraceID, n)
	for i := range ids {
		ids[i] = pcommon.TraceID{0x9c, byte(i), 1}
	}
	return ids
}

// Traces queued together are committed together, and late spans of a
// trace written earlier in the same open group merge into it: the merge
// reads the trace through the group's transaction.
func TestReceiveGroupCommit(t *testing.T) {
	g := startGrouped(t, func(ctx context.Context, b *sqlite.Batch, _ int) error { return b.Commit(ctx) })
	ids := traceIDs(8)
	g.send(t, ids, 1)
	g.send(t, ids[:1], 10) // late spans of the first trace
	close(g.open)
	waitFor(t, "the traces stored", func() bool { return g.r.Stats().Stored == 9 })
	if err := g.stop(); err != nil {
		t.Fatal(err)
	}
	s := g.r.Stats()
	if s.Stored != 9 || s.Merged != 1 || s.NotStored != 0 || s.StoreRetries != 0 || s.OpenTraces != 0 || s.OpenBytes != 0 {
		t.Errorf("stats %+v", s)
	}
	if g.calls != 1 {
		t.Errorf("%d commits for traces queued together, want 1", g.calls)
	}
	for i, id := range ids {
		want := 3
		if i == 0 {
			want = 3 + 4
		}
		if tr, err := g.st.Load(context.Background(), id.String()); err != nil || len(tr.Steps) != want {
			t.Errorf("trace %d: %v, %d steps, want %d", i, err, len(tr.Steps), want)
		}
	}
}

// A group whose commit fails stays queued and is stored on a later
// attempt, each trace counted once as stored, whether the failed commit
// lost the group or the store had committed it all the same.
func TestReceiveGroupCommitFails(t *testing.T) {
	tests := []struct {
		name     string
		rollback bool
	}{
		{"the group rolled back", true},
		{"the group committed all the same", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := startGrouped(t, func(ctx context.Context, b *sqlite.Batch, call int) error {
				if call > 1 {
					return b.Commit(ctx)
				}
				if tt.rollback {
					cancelled, cancel := context.WithCancel(ctx)
					cancel()
					b.Close(cancelled)
				} else if err := b.Commit(ctx); err != nil {
					return err
				}
				return errBusy
			})
			ids := traceIDs(5)
			g.send(t, ids, 1)
			close(g.open)
			waitFor(t, "the traces stored", func() bool { return g.r.Stats().Stored == 5 })
			if err := g.stop(); err != nil {
				t.Fatal(err)
			}
			s := g.r.Stats()
			if s.Stored != 5 || s.NotStored != 0 || s.Merged != 0 || s.Lost != 0 || s.StoreRetries == 0 || s.Waiting != 0 || s.OpenBytes != 0 {
				t.Errorf("stats %+v", s)
			}
			for i, id := range ids {
				if tr, err := g.st.Load(context.Background(), id.String()); err != nil || len(tr.Steps) != 3 {
					t.Errorf("trace %d: %v, want 3 steps", i, err)
				}
			}
		})
	}
}
