package receive

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/faultline/faultline/internal/store/sqlite"
)

// In durable mode a request is in the spool once answered 200; what was
// held in memory when the receiver stopped without storing it (here:
// traces whose root never came, cut off at shutdown) is replayed on the
// next start, and the spool is emptied as the traces are stored. Replaying
// twice stores nothing twice.
func TestReceiveSpoolReplay(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "spool")
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := Config{Sink: st, Loader: st, Spool: dir, RootWait: time.Hour, IdleTimeout: time.Hour}
	rcv := start(t, cfg)
	var ids []string
	for i := range 3 {
		id := pcommon.TraceID{0x5f, byte(i), 1}
		ids = append(ids, id.String())
		// The children only: the trace waits for its root.
		if resp, body := post(t, rcv.addr, "application/x-protobuf", run(id, 3, 2)); resp.StatusCode != 200 {
			t.Fatal(string(body))
		}
	}
	if s := rcv.r.Stats(); s.SpoolBytes == 0 {
		t.Errorf("nothing spooled: %+v", s)
	}
	rcv.stop()
	if s := rcv.r.Stats(); s.Stored != 0 || s.NotStored != 3 {
		t.Fatalf("stats %+v", s)
	}

	// The roots come after the restart: each trace is whole again.
	rcv = start(t, cfg)
	waitFor(t, "the replay", func() bool { return rcv.r.Stats().Replayed == 3 })
	for i := range 3 {
		if resp, body := post(t, rcv.addr, "application/x-protobuf", run(pcommon.TraceID{0x5f, byte(i), 1}, 1, 1)); resp.StatusCode != 200 {
			t.Fatal(string(body))
		}
	}
	rcv.stop()
	for _, id := range ids {
		if tr, err := st.Load(ctx, id); err != nil || len(tr.Steps) != 3 || tr.Meta["otel.incomplete"] != "" {
			t.Errorf("trace %s: %v %v", id, err, tr)
		}
	}
	if files := spoolFiles(t, dir); len(files) != 0 {
		t.Errorf("the spool holds %v once every trace is stored", files)
	}

	// A spool entry whose traces are stored, replayed (a done record lost
	// in a crash), adds nothing.
	rcv = start(t, Config{Sink: st, Loader: st, Spool: dir, RootWait: 10 * time.Millisecond})
	post(t, rcv.addr, "application/x-protobuf", run(pcommon.TraceID{0x5f, 0, 1}, 4, 1))
	waitFor(t, "the spans sent again", func() bool { return rcv.r.Stats().NotStored == 1 })
	rcv.stop()
	sp, err := openSpool(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sp.append(protoEncoding, run(pcommon.TraceID{0x5f, 0, 1}, 4, 1), 1); err != nil {
		t.Fatal(err)
	}
	sp.close()
	rcv = start(t, Config{Sink: st, Loader: st, Spool: dir, RootWait: 10 * time.Millisecond})
	waitFor(t, "the replayed entry", func() bool { return rcv.r.Stats().NotStored == 1 })
	rcv.stop()
	if s := rcv.r.Stats(); s.Stored != 0 || s.Replayed != 1 {
		t.Errorf("stats %+v", s)
	}
	if tr, err := st.Load(ctx, ids[0]); err != nil || len(tr.Steps) != 3 {
		t.Errorf("trace %s: %v %d steps", ids[0], err, len(tr.Steps))
	}
	if files := spoolFiles(t, dir); len(files) != 0 {
		t.Errorf("the spool holds %v", files)
	}
}

// A record cut short by a crash in mid-write ends its segment: what came
// before it is replayed.
func TestSpoolTornRecord(t *testing.T) {
	dir := t.TempDir()
	sp, err := openSpool(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"first", "second"} {
		if _, err := sp.append(jsonEncoding, []byte(body), 1); err != nil {
			t.Fatal(err)
		}
	}
	sp.cur.Close()
	files := spoolFiles(t, dir)
	info, _ := os.Stat(files[0])
	if err := os.Truncate(files[0], info.Size()-3); err != nil {
		t.Fatal(err)
	}
	sp, err = openSpool(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := sp.replay(func(_ uint64, enc encoding, body []byte) int {
		got = append(got, string(body))
		return 1
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "first" || sp.pending() != 1 {
		t.Errorf("replayed %q, %d pending", got, sp.pending())
	}
	id, err := sp.append(jsonEncoding, []byte("third"), 1)
	if err != nil || id != 2 { // the id of the record cut short, never acknowledged
		t.Errorf("id %d, %v", id, err)
	}
}

func spoolFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"+spoolSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return files
}
