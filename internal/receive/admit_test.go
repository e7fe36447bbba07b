package receive

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/faultline/faultline/ingest"
)

// stalled is a request body that sends head, then waits for more until
// rest is closed.
type stalled struct {
	head io.Reader
	rest chan []byte
}

func (s *stalled) Read(p []byte) (int, error) {
	if n, _ := s.head.Read(p); n > 0 {
		return n, nil
	}
	b, ok := <-s.rest
	if !ok {
		return 0, io.EOF
	}
	s.head = bytes.NewReader(b)
	return s.Read(p)
}

// A request's bytes are counted against the memory budget before it is
// decoded: its Content-Length before its body is read, the bytes read so
// far of a chunked body, what gzip gives out; a request that cannot fit is
// refused before its body is read.
func TestReceiveAdmission(t *testing.T) {
	// Two requests of a little under a third of the budget each: each fits
	// alone, with what decoding it takes; not both.
	const budget = 256 << 10
	body := run(pcommon.TraceID{0xad, 1}, 300, 1)
	big := run(pcommon.TraceID{0xad, 2}, 300, 1)
	if int64(len(big))*decodeCost > budget || int64(len(big)+len(body)/2)*decodeCost < budget {
		t.Fatalf("requests of %d bytes do not test the budget", len(big))
	}
	rcv := start(t, Config{Sink: newMemSink(), MaxBytes: budget, RootWait: 5 * time.Millisecond})
	send := func(body io.Reader, length int64, header ...string) (*http.Response, string) {
		resp, b := postBody(t, rcv.addr, "application/x-protobuf", body, length, header...)
		return resp, string(b)
	}

	// Larger than the budget can ever hold, by its Content-Length: refused
	// with 413 without its body being read (it never ends).
	never := &stalled{head: bytes.NewReader(body[:100]), rest: make(chan []byte)}
	defer close(never.rest)
	if resp, msg := send(never, budget/2, "Connection", "close"); resp.StatusCode != 413 || !strings.Contains(msg, "to decode") {
		t.Errorf("%d %s", resp.StatusCode, msg)
	}

	// A chunked request holds what it has sent so far...
	rest := make(chan []byte)
	chunked := &stalled{head: bytes.NewReader(body[:len(body)/2]), rest: rest}
	done := make(chan *http.Response, 1)
	go func() {
		resp, _ := send(chunked, -1)
		done <- resp
	}()
	waitFor(t, "the first half counted", func() bool { return rcv.r.Stats().RequestBytes >= int64(len(body)/2) })
	// ...so that a request that fits the budget alone waits its turn.
	resp, msg := send(bytes.NewReader(big), int64(len(big)))
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || !strings.Contains(msg, "memory") {
		t.Errorf("%d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), msg)
	}
	rest <- body[len(body)/2:]
	close(rest)
	if resp := <-done; resp.StatusCode != 200 {
		t.Errorf("the chunked request: %d", resp.StatusCode)
	}
	waitFor(t, "its trace stored", func() bool { return rcv.r.Stats().OpenBytes == 0 })
	if resp, msg := send(bytes.NewReader(big), int64(len(big))); resp.StatusCode != 200 {
		t.Errorf("once the budget is free: %d %s", resp.StatusCode, msg)
	}

	waitFor(t, "its trace stored", func() bool { return rcv.r.Stats().OpenBytes == 0 })

	// What gzip gives out is counted as it comes.
	bomb := gzipped(bytes.Repeat([]byte(" "), budget))
	if resp, msg := send(bytes.NewReader(bomb), int64(len(bomb)), "Content-Encoding", "gzip"); resp.StatusCode != 413 || !strings.Contains(msg, "to decode") {
		t.Errorf("gzip: %d %s", resp.StatusCode, msg)
	}
	if s := rcv.r.Stats(); s.RequestBytes != 0 || s.Throttled != 1 || s.Requests != 2 {
		t.Errorf("stats %+v", s)
	}
}

// flakySink fails its first calls with err, then stores.
type flakySink struct {
	*memSink
	mu    sync.Mutex
	fails int
	err   error
}

func (f *flakySink) File(ctx context.Context, info ingest.FileInfo) (ingest.FileSink, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fails > 0 {
		f.fails--
		return nil, f.err
	}
	return f.memSink.File(ctx, info)
}

var errBusy = errors.New("database is locked (5) (SQLITE_BUSY)")

func TestReceiveStoreFailures(t *testing.T) {
	tests := []struct {
		name      string
		fails     int
		transient bool
		stored    bool
		lost      int64
		log       string
	}{
		{"a busy store is waited for", 4, true, true, 0, "retrying"},
		{"another error is retried a few times", 2, false, true, 0, "retrying"},
		{"then given up", 5, false, false, 1, "acknowledged trace lost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sink := &flakySink{memSink: newMemSink(), fails: tt.fails, err: errBusy}
			log, logs := fileLog(t)
			rcv := start(t, Config{Sink: sink, RootWait: 5 * time.Millisecond, Transient: func(error) bool { return tt.transient }, Log: log})
			id := pcommon.TraceID{0xfa, byte(tt.fails), 1}
			if resp, body := post(t, rcv.addr, "application/x-protobuf", run(id, 3, 1)); resp.StatusCode != 200 {
				t.Fatal(string(body))
			}
			waitFor(t, "a failure", func() bool { return rcv.r.Stats().StoreRetries > 0 })
			if resp, _ := post(t, rcv.addr, "application/x-protobuf", run(pcommon.TraceID{0xfb}, 3, 1)); resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
				t.Errorf("while the store fails: %d %q", resp.StatusCode, resp.Header.Get("Retry-After"))
			}
			waitFor(t, "the trace handled", func() bool { s := rcv.r.Stats(); return s.Stored+s.Lost == 1 })
			if resp, _ := post(t, rcv.addr, "application/x-protobuf", run(pcommon.TraceID{0xfc}, 3, 1)); resp.StatusCode != 200 {
				t.Errorf("once the store recovered: %d", resp.StatusCode)
			}
			rcv.stop()
			s := rcv.r.Stats()
			if (sink.get(id.String()) != nil) != tt.stored || s.Lost != tt.lost || s.Unavailable != 1 || s.Waiting != 0 || s.OpenBytes != 0 {
				t.Errorf("stats %+v", s)
			}
			if !strings.Contains(logs(), tt.log) {
				t.Errorf("log:\n%s", logs())
			}
		})
	}
}

// At shutdown the receiver waits DrainTimeout for a failing store, then
// gives up what it still holds, saying so.
func TestReceiveDrainTimeout(t *testing.T) {
	sink := &flakySink{memSink: newMemSink(), fails: 1 << 30, err: errBusy}
	log, logs := fileLog(t)
	rcv := start(t, Config{Sink: sink, RootWait: time.Hour, DrainTimeout: 200 * time.Millisecond, Log: log})
	post(t, rcv.addr, "application/x-protobuf", run(pcommon.TraceID{0xdd}, 3, 1))
	begin := time.Now()
	rcv.stop()
	if s := rcv.r.Stats(); s.Lost != 1 || s.Stored != 0 || time.Since(begin) > 5*time.Second {
		t.Errorf("stats %+v after %v", s, time.Since(begin))
	}
	if !strings.Contains(logs(), "acknowledged trace lost") {
		t.Errorf("log:\n%s", logs())
	}
}
