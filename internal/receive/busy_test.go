package receive

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/faultline/faultline/internal/store/sqlite"
)

// run is an agent run of n spans (an invoke_agent root, chat calls under it)
// in trace id, as OTLP protobuf.
func run(id pcommon.TraceID, n int, first byte) []byte {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	t0 := pcommon.NewTimestampFromTime(time.Unix(1767225600, 0))
	for i := range n {
		sp := spans.AppendEmpty()
		sp.SetTraceID(id)
		sp.SetSpanID(pcommon.SpanID{first + byte(i), 0xaa})
		sp.SetStartTimestamp(t0 + pcommon.Timestamp(int(first)+i)*1e9)
		sp.SetEndTimestamp(t0 + pcommon.Timestamp(int(first)+i)*1e9 + 5e8)
		a := sp.Attributes()
		if i == 0 && first == 1 {
			sp.SetName("invoke_agent bench")
			a.PutStr("gen_ai.operation.name", "invoke_agent")
			a.PutStr("gen_ai.agent.name", "bench")
			sp.SetEndTimestamp(t0 + 100e9)
			continue
		}
		sp.SetParentSpanID(pcommon.SpanID{1, 0xaa})
		sp.SetName("chat gpt-4.1")
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.request.model", "gpt-4.1")
		a.PutStr("gen_ai.output.messages", fmt.Sprintf(`[{"role":"assistant","parts":[{"type":"text","content":"step %d of %s"}]}]`, int(first)+i, id))
	}
	b, _ := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	return b
}

// lockStore holds SQLite's write lock on the database at path, as another
// process (faultline ingest) does while it writes, until release.
func lockStore(t *testing.T, path string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	done := false
	release = func() {
		if !done {
			done = true
			conn.ExecContext(context.Background(), "ROLLBACK")
			conn.Close()
			db.Close()
		}
	}
	t.Cleanup(release)
	return release
}

// While another process holds SQLite's write lock for longer than the
// store's busy timeout (10s), every trace the receiver answered 200 for is
// stored once the lock is released; once the store has failed, requests
// are refused with 503 and a Retry-After instead of acknowledged.
func TestReceiveBusyStoreKeepsAcknowledgedTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out SQLite's busy timeout")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "f.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log, logs := fileLog(t)
	rcv := start(t, Config{Sink: st, Loader: st, RootWait: 10 * time.Millisecond, Log: log})
	release := lockStore(t, path)
	acked := map[string]bool{}
	refused := 0
	begin := time.Now()
	for i := 0; time.Since(begin) < 27*time.Second; i++ {
		if time.Since(begin) > 24*time.Second {
			release()
		}
		id := pcommon.TraceID{0xb5, byte(i >> 8), byte(i), 1}
		resp, _ := post(t, rcv.addr, "application/x-protobuf", run(id, 4, 1))
		switch resp.StatusCode {
		case 200:
			acked[id.String()] = true
		case 503:
			refused++
			if resp.Header.Get("Retry-After") == "" {
				t.Errorf("%d without Retry-After", resp.StatusCode)
			}
		default:
			t.Fatalf("status %d", resp.StatusCode)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err := rcv.stop(); err != nil {
		t.Fatal(err)
	}
	stored := 0
	for id := range acked {
		if tr, err := st.Load(ctx, id); err == nil && len(tr.Steps) == 3 {
			stored++
		}
	}
	s := rcv.r.Stats()
	t.Logf("acknowledged %d traces, stored %d; %d requests refused with 503; stats %+v", len(acked), stored, refused, s)
	if stored != len(acked) || s.Lost != 0 || s.Stored != int64(len(acked)) {
		t.Errorf("acknowledged %d traces, stored %d", len(acked), stored)
	}
	if refused == 0 || s.Unavailable != int64(refused) || s.StoreRetries == 0 {
		t.Errorf("no request refused while the store was locked: %+v", s)
	}
	if !strings.Contains(logs(), "database is locked") || !strings.Contains(logs(), "retrying") {
		t.Errorf("the failures are not logged:\n%s", logs())
	}
}

// fileLog is a logger writing to a file the receiver's goroutines share,
// and what it holds so far.
func fileLog(t *testing.T) (*slog.Logger, func() string) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return slog.New(slog.NewTextHandler(f, nil)), func() string {
		b, _ := os.ReadFile(f.Name())
		return string(b)
	}
}
