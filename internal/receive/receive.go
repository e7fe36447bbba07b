// Package receive is faultline's live OpenTelemetry receiver: OTLP/HTTP
// POST /v1/traces, protobuf or JSON, gzip or not. Spans are held per trace id
// until the trace is complete, then mapped to a trace.Trace by the same code
// that maps OTLP files (otel.Trace, of ingest/otel) and handed to an
// ingest.Sink (the store, behind the detectors).
//
// A trace is complete when its root span (the one without a parent) has
// arrived and no span of it came for RootWait, the grace that lets a
// retried or slower batch of its children catch up; a trace whose root never
// arrives is taken as it is after IdleTimeout without a new span. Spans that
// arrive for a trace already stored are rejected (reported in the response's
// partial success and logged): storing them would replace the stored trace
// with a fragment. Spans of a trace stored longer ago, or before a restart,
// are assembled as a trace of their own, which the store refuses when it
// has fewer steps than the stored one; the refusal is logged.
//
// Memory is bounded: MaxTraces open traces, MaxSpans spans and MaxBytes of
// span content (as otel.Span.Size estimates it) are held at most, counting
// traces waiting to be stored. A request that would pass a limit is rejected
// whole with 429 Too Many Requests and a Retry-After, which OTLP exporters
// retry; nothing is evicted, so a stored trace is never cut short by load. A
// request larger than the limits themselves is refused with 413.
//
// On shutdown the server stops accepting, finishes the requests in flight,
// and stores every trace whose root span arrived; traces without one are
// counted and logged, not stored, since they are cut off.
package receive

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/ingest/otel"
	"github.com/faultline/faultline/trace"
)

// Path is where OTLP/HTTP exporters send traces.
const Path = "/v1/traces"

// Config sets up a Receiver. Zero values take the defaults below.
type Config struct {
	// Sink receives every assembled trace, as one file keyed "otlp:<trace id>".
	Sink ingest.Sink
	// Source is recorded as each trace's source, e.g. the address listened on.
	Source string
	// RootWait is how long a trace whose root span arrived waits for more spans.
	RootWait time.Duration
	// IdleTimeout is how long a trace without a root span waits for more spans.
	IdleTimeout time.Duration
	// MaxTraces, MaxSpans and MaxBytes bound what is held.
	MaxTraces int
	MaxSpans  int
	MaxBytes  int
	// MaxBodyBytes bounds a request body, after decompression.
	MaxBodyBytes int64
	// Stored is called after each trace is stored (or found already stored).
	Stored func(t *trace.Trace)
	Log    *slog.Logger
}

// Defaults.
const (
	DefaultRootWait     = 2 * time.Second
	DefaultIdleTimeout  = 30 * time.Second
	DefaultMaxTraces    = 10_000
	DefaultMaxSpans     = 200_000
	DefaultMaxBytes     = 256 << 20
	DefaultMaxBodyBytes = 32 << 20
)

// Stats counts what a receiver did.
type Stats struct {
	Requests      int64 // requests answered 200
	Spans         int64 // spans accepted
	RejectedSpans int64 // spans refused: no ids, late, or in a request refused for load
	Throttled     int64 // requests refused with 429
	Stored        int64 // traces stored
	NotStored     int64 // traces with no agent content, cut off at shutdown, or refused by the sink
	OpenTraces    int   // traces held now, including those waiting to be stored
	OpenSpans     int
	OpenBytes     int
}

// Receiver assembles traces from OTLP/HTTP requests.
type Receiver struct {
	cfg   Config
	ready chan *openTrace // complete traces, to the store
	done  chan struct{}   // closed when the store worker has drained ready

	mu     sync.Mutex
	open   map[pcommon.TraceID]*openTrace
	recent recentIDs // traces already handed to the store
	stats  Stats
}

// openTrace is one trace being assembled.
type openTrace struct {
	id     pcommon.TraceID
	spans  []otel.Span
	ids    map[pcommon.SpanID]bool
	bytes  int
	format string
	root   bool
	last   time.Time
}

// New returns a receiver; Serve runs it.
func New(cfg Config) *Receiver {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	if cfg.RootWait <= 0 {
		cfg.RootWait = DefaultRootWait
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	def(&cfg.MaxTraces, DefaultMaxTraces)
	def(&cfg.MaxSpans, DefaultMaxSpans)
	def(&cfg.MaxBytes, DefaultMaxBytes)
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Receiver{
		cfg:    cfg,
		ready:  make(chan *openTrace, 64),
		done:   make(chan struct{}),
		open:   map[pcommon.TraceID]*openTrace{},
		recent: newRecentIDs(cfg.MaxTraces),
	}
}

// Stats returns the counts so far.
func (r *Receiver) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// Serve answers OTLP/HTTP on ln until ctx is done, then shuts down: it
// finishes the requests in flight and stores the complete traces.
func (r *Receiver) Serve(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle(Path, r)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute}
	// Storing outlives ctx: what was accepted is stored even while shutting down.
	storeCtx := context.WithoutCancel(ctx)
	go r.store(storeCtx)
	tick := time.NewTicker(min(max(min(r.cfg.RootWait, r.cfg.IdleTimeout)/4, 5*time.Millisecond), 500*time.Millisecond))
	defer tick.Stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var err error
loop:
	for {
		select {
		case <-tick.C:
			r.flush(time.Now(), false)
		case err = <-served:
			break loop
		case <-ctx.Done():
			shutdownCtx, cancel := context.WithTimeout(storeCtx, 10*time.Second)
			err = srv.Shutdown(shutdownCtx)
			cancel()
			break loop
		}
	}
	r.flush(time.Now(), true)
	close(r.ready)
	<-r.done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// flush hands complete traces to the store; at shutdown, every trace whose
// root arrived, and it drops the others.
func (r *Receiver) flush(now time.Time, final bool) {
	var out []*openTrace
	r.mu.Lock()
	for id, ot := range r.open {
		idle := now.Sub(ot.last)
		switch {
		case ot.root && (final || idle >= r.cfg.RootWait), !final && idle >= r.cfg.IdleTimeout:
			out = append(out, ot)
		case final:
			r.stats.NotStored++
			r.release(ot)
			r.cfg.Log.Warn("trace cut off at shutdown, not stored: its root span never arrived", "trace", id.String(), "spans", len(ot.spans))
		default:
			continue
		}
		delete(r.open, id)
		r.recent.add(id)
	}
	r.mu.Unlock()
	// Oldest first, so the store sees traces in the order they went quiet.
	slices.SortFunc(out, func(a, b *openTrace) int { return a.last.Compare(b.last) })
	for _, ot := range out {
		r.ready <- ot
	}
}

// release gives back what a trace held; r.mu is held.
func (r *Receiver) release(ot *openTrace) {
	r.stats.OpenTraces--
	r.stats.OpenSpans -= len(ot.spans)
	r.stats.OpenBytes -= ot.bytes
}

// store maps, detects and stores each complete trace, one at a time.
func (r *Receiver) store(ctx context.Context) {
	defer close(r.done)
	for ot := range r.ready {
		if err := r.storeOne(ctx, ot); err != nil {
			r.cfg.Log.Error("storing trace", "trace", ot.id.String(), "err", err)
		}
		r.mu.Lock()
		r.release(ot)
		r.mu.Unlock()
	}
}

func (r *Receiver) storeOne(ctx context.Context, ot *openTrace) error {
	t, notes := otel.Trace(ot.spans, ot.format, r.cfg.Source)
	for _, n := range notes {
		r.cfg.Log.Info("trace "+ot.id.String()+": "+n, "trace", ot.id.String())
	}
	if !ot.root {
		r.cfg.Log.Warn("trace stored without its root span after the idle timeout", "trace", ot.id.String(), "spans", len(ot.spans))
	}
	if t == nil {
		r.mu.Lock()
		r.stats.NotStored++
		r.mu.Unlock()
		return nil
	}
	if !ot.root {
		t.SetMeta("otel.incomplete", "no root span within the idle timeout")
	}
	info := ingest.FileInfo{Path: "otlp:" + t.ID, Hash: ot.hash(), Size: int64(ot.bytes), Format: ot.format}
	_, err := ingest.StoreFile(ctx, r.cfg.Sink, info, t)
	switch {
	case errors.Is(err, ingest.ErrRefused):
		// Late spans of a trace already stored: the stored trace stays whole.
		r.mu.Lock()
		r.stats.NotStored++
		r.mu.Unlock()
		r.cfg.Log.Warn("trace not stored: the sink refused it", "trace", ot.id.String(), "spans", len(ot.spans), "err", err)
		return nil
	case err != nil:
		return err
	}
	r.mu.Lock()
	r.stats.Stored++
	r.mu.Unlock()
	if r.cfg.Stored != nil {
		r.cfg.Stored(t)
	}
	return nil
}

// hash identifies a trace's content by its spans' ids and end times, so that
// a trace sent again unchanged is not stored again.
func (ot *openTrace) hash() string {
	keys := make([]string, len(ot.spans))
	for i, s := range ot.spans {
		keys[i] = s.SpanID.String() + strconv.FormatInt(s.End.UnixNano(), 10)
	}
	slices.Sort(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ServeHTTP answers one OTLP/HTTP export request.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	ct, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	var enc encoding
	switch ct {
	case "application/x-protobuf", "application/protobuf":
		enc = protoEncoding
	case "application/json":
		enc = jsonEncoding
	default:
		writeStatus(w, protoEncoding, http.StatusUnsupportedMediaType, codeInvalidArgument, fmt.Sprintf("Content-Type %q: send application/x-protobuf or application/json", ct))
		return
	}
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeStatus(w, enc, http.StatusMethodNotAllowed, codeInvalidArgument, "only POST is accepted")
		return
	}
	body, status, err := r.readBody(w, req)
	if err != nil {
		writeStatus(w, enc, status, codeInvalidArgument, err.Error())
		return
	}
	var td ptrace.Traces
	if enc == protoEncoding {
		td, err = (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(body)
	} else {
		td, err = (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(body)
	}
	if err != nil {
		writeStatus(w, enc, http.StatusBadRequest, codeInvalidArgument, "not OTLP traces: "+err.Error())
		return
	}
	var problems []string
	noIDs := 0
	spans := otel.Spans(td, func(where string, err error) {
		noIDs++
		if len(problems) < 3 {
			problems = append(problems, where+": "+err.Error())
		}
	})
	format := ingest.OTLPJSON{}.Name()
	if enc == protoEncoding {
		format = ingest.OTLPProto{}.Name()
	}
	late, retry, tooBig := r.accept(spans, format, time.Now())
	switch {
	case tooBig != "":
		r.reject(td.SpanCount(), false)
		writeStatus(w, enc, http.StatusRequestEntityTooLarge, codeInvalidArgument, tooBig)
		return
	case retry > 0:
		r.reject(td.SpanCount(), true)
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
		writeStatus(w, enc, http.StatusTooManyRequests, codeResourceExhausted, "faultline receive holds as many open traces or spans as it may; retry later")
		return
	}
	if late > 0 {
		problems = append(problems, fmt.Sprintf("%d spans arrived after their trace was stored (raise --root-wait or --idle-timeout)", late))
		r.cfg.Log.Warn("spans arrived after their trace was stored; rejected", "spans", late)
	}
	if noIDs > 0 {
		r.cfg.Log.Warn("spans without trace or span id rejected", "spans", noIDs, "first", problems[0])
	}
	r.mu.Lock()
	r.stats.Requests++
	r.stats.Spans += int64(len(spans) - late)
	r.stats.RejectedSpans += int64(late + noIDs)
	r.mu.Unlock()
	writeResponse(w, enc, int64(late+noIDs), problems)
}

func (r *Receiver) reject(spans int, throttled bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.RejectedSpans += int64(spans)
	if throttled {
		r.stats.Throttled++
	}
}

// readBody reads the request body, decompressed, within MaxBodyBytes.
func (r *Receiver) readBody(w http.ResponseWriter, req *http.Request) ([]byte, int, error) {
	var body io.Reader = http.MaxBytesReader(w, req.Body, r.cfg.MaxBodyBytes)
	switch req.Header.Get("Content-Encoding") {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, http.StatusBadRequest, fmt.Errorf("gzip body: %w", err)
		}
		defer zr.Close()
		body = zr
	default:
		return nil, http.StatusUnsupportedMediaType, fmt.Errorf("Content-Encoding %q: send gzip or none", req.Header.Get("Content-Encoding"))
	}
	b, err := io.ReadAll(io.LimitReader(body, r.cfg.MaxBodyBytes+1))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig) || int64(len(b)) > r.cfg.MaxBodyBytes:
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("body larger than %d bytes", r.cfg.MaxBodyBytes)
	case err != nil:
		return nil, http.StatusBadRequest, fmt.Errorf("reading body: %w", err)
	}
	return b, 0, nil
}

// accept adds a request's spans to their traces, all or none. It returns
// how many spans came for traces already stored (rejected), or, when the
// spans do not fit, how long until they might (retry) or why they never will
// (tooBig).
func (r *Receiver) accept(spans []otel.Span, format string, now time.Time) (late int, retry time.Duration, tooBig string) {
	// The spans' sizes walk their attributes: worked out once, outside the lock.
	sizes := make([]int, len(spans))
	size := 0
	for i := range spans {
		sizes[i] = spans[i].Size()
		size += sizes[i]
	}
	newTraces := 0
	r.mu.Lock()
	defer r.mu.Unlock()
	fresh := map[pcommon.TraceID]bool{}
	for i := range spans {
		id := spans[i].TraceID
		if r.open[id] == nil && !r.recent.has(id) && !fresh[id] {
			fresh[id] = true
			newTraces++
		}
	}
	c := r.cfg
	if len(spans) > c.MaxSpans || size > c.MaxBytes || newTraces > c.MaxTraces {
		return 0, 0, fmt.Sprintf("request of %d spans (%d bytes held) exceeds the receiver's limits (%d spans, %d bytes, %d traces)",
			len(spans), size, c.MaxSpans, c.MaxBytes, c.MaxTraces)
	}
	s := &r.stats
	if s.OpenSpans+len(spans) > c.MaxSpans || s.OpenBytes+size > c.MaxBytes || s.OpenTraces+newTraces > c.MaxTraces {
		return 0, r.nextFlush(now), ""
	}
	for i, sp := range spans {
		if r.recent.has(sp.TraceID) {
			late++
			continue
		}
		ot := r.open[sp.TraceID]
		if ot == nil {
			ot = &openTrace{id: sp.TraceID, ids: map[pcommon.SpanID]bool{}, format: format}
			r.open[sp.TraceID] = ot
			s.OpenTraces++
		}
		ot.last = now
		if ot.ids[sp.SpanID] {
			continue // an exporter's retry of a request that did arrive
		}
		ot.ids[sp.SpanID] = true
		ot.spans = append(ot.spans, sp)
		n := sizes[i]
		ot.bytes += n
		s.OpenSpans++
		s.OpenBytes += n
		if sp.ParentID.IsEmpty() {
			ot.root = true
		}
	}
	return late, 0, ""
}

// nextFlush estimates when the earliest open trace will be handed to the
// store, freeing room; r.mu is held.
func (r *Receiver) nextFlush(now time.Time) time.Duration {
	next := r.cfg.IdleTimeout
	for _, ot := range r.open {
		wait := r.cfg.IdleTimeout
		if ot.root {
			wait = r.cfg.RootWait
		}
		next = min(next, max(0, wait-now.Sub(ot.last)))
	}
	return max(next, time.Second)
}

// recentIDs remembers the last n trace ids handed to the store.
type recentIDs struct {
	ring []pcommon.TraceID
	next int
	set  map[pcommon.TraceID]int // id → how many times it is in ring
}

func newRecentIDs(n int) recentIDs {
	return recentIDs{ring: make([]pcommon.TraceID, 0, n), set: map[pcommon.TraceID]int{}}
}

func (s *recentIDs) has(id pcommon.TraceID) bool { return s.set[id] > 0 }

func (s *recentIDs) add(id pcommon.TraceID) {
	if len(s.ring) < cap(s.ring) {
		s.ring = append(s.ring, id)
	} else {
		old := s.ring[s.next]
		if s.set[old]--; s.set[old] == 0 {
			delete(s.set, old)
		}
		s.ring[s.next] = id
		s.next = (s.next + 1) % len(s.ring)
	}
	s.set[id]++
}

// encoding is how a request was sent, and so how it is answered.
type encoding int

const (
	protoEncoding encoding = iota
	jsonEncoding
)

func (e encoding) contentType() string {
	if e == jsonEncoding {
		return "application/json"
	}
	return "application/x-protobuf"
}

// gRPC status codes used in error bodies.
const (
	codeInvalidArgument   = 3
	codeResourceExhausted = 8
)

// writeResponse writes an ExportTraceServiceResponse, with a partial
// success when spans were rejected. The messages are small enough to write
// by hand, which spares pdata's ptraceotlp and the gRPC stack it imports.
func writeResponse(w http.ResponseWriter, enc encoding, rejected int64, problems []string) {
	msg := strings.Join(problems, "; ")
	var body []byte
	if enc == jsonEncoding {
		resp := map[string]any{}
		if rejected > 0 || msg != "" {
			resp["partialSuccess"] = map[string]any{"rejectedSpans": strconv.FormatInt(rejected, 10), "errorMessage": msg}
		}
		body, _ = json.Marshal(resp)
	} else if rejected > 0 || msg != "" {
		var partial []byte
		partial = binary.AppendUvarint(partial, 1<<3) // rejected_spans, a varint (wire type 0)
		partial = binary.AppendUvarint(partial, uint64(rejected))
		partial = otel.ProtoAppendLen(partial, 2, []byte(msg)) // error_message
		body = otel.ProtoAppendLen(nil, 1, partial)            // partial_success
	}
	w.Header().Set("Content-Type", enc.contentType())
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// writeStatus writes an error as OTLP/HTTP prescribes: a google.rpc.Status
// in the request's encoding.
func writeStatus(w http.ResponseWriter, enc encoding, httpStatus, code int, message string) {
	var body []byte
	if enc == jsonEncoding {
		body, _ = json.Marshal(map[string]any{"code": code, "message": message})
	} else {
		body = binary.AppendUvarint(body, 1<<3) // code, a varint (wire type 0)
		body = binary.AppendUvarint(body, uint64(code))
		body = otel.ProtoAppendLen(body, 2, []byte(message)) // message
	}
	w.Header().Set("Content-Type", enc.contentType())
	w.WriteHeader(httpStatus)
	w.Write(body)
}
