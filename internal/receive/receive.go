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
// arrive for a trace already stored are merged into it (see merge.go): the
// stored trace keeps its steps and gains the new spans' steps in their
// place; a span it already holds (an exporter's retry) adds nothing. Spans of
// a trace stored before a restart are assembled on their own and merged the
// same way, through Config.Loader.
//
// Memory is bounded: MaxTraces open traces, MaxSpans spans and MaxBytes of
// span content (as otel.Span.Size estimates it) are held at most, counting
// traces waiting to be stored, and MaxBytes also covers the requests being
// read and decoded (see admit.go), which are counted before they are
// decoded. A request that would pass a limit is rejected whole with 429 Too
// Many Requests and a Retry-After, which OTLP exporters retry; nothing is
// evicted, so a stored trace is never cut short by load. A request larger
// than the limits themselves is refused with 413.
//
// Complete traces wait in a queue, mapped and run through the detectors
// ahead of the store on every core, and are stored a group at a time, one
// commit for many (Config.Commit): a trace leaves the queue, and the
// limits, once the commit that holds it has succeeded.
//
// A trace answered 200 for is stored even when the store is busy (another
// process holding SQLite's write lock): it waits in the queue, counted in
// the limits, and is retried with backoff (see storing.go); meanwhile
// requests are refused with 503 and a Retry-After, so that no more is
// acknowledged than the store can be trusted to take. What is acknowledged
// lives in memory until stored, so a crash of the process loses it, unless
// Config.Spool names a directory: each accepted request is then written
// there and synced before it is answered, and replayed on start (see
// spool.go).
//
// On shutdown the server stops accepting, finishes the requests in flight,
// and stores every trace whose root span arrived; traces without one are
// counted and logged, not stored, since they are cut off (with a spool they
// stay in it, to be completed after the restart).
package receive

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"mime"
	"net"
	"net/http"
	"runtime"
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
	// Loader reads the trace stored under an id, for late spans to merge
	// into; nil stores every assembled trace as it is, which the sink may
	// refuse when it holds a longer one.
	Loader Loader
	// Transient says whether a store error may pass, such as SQLite's
	// "database is locked": a trace that met one is retried until stored.
	// A trace that meets another error is retried a few times, then given
	// up (counted Lost). Nil takes every error as transient.
	Transient func(error) bool
	// Spool, when set, is a directory where each accepted request is written
	// and synced before it is answered, and from which what was not stored
	// is replayed on start (durable mode).
	Spool string
	// Source is recorded as each trace's source, e.g. the address listened on.
	Source string
	// RootWait is how long a trace whose root span arrived waits for more spans.
	RootWait time.Duration
	// IdleTimeout is how long a trace without a root span waits for more spans.
	IdleTimeout time.Duration
	// DrainTimeout is how long shutdown waits for a busy store to take the
	// traces still queued.
	DrainTimeout time.Duration
	// MaxTraces, MaxSpans and MaxBytes bound what is held.
	MaxTraces int
	MaxSpans  int
	MaxBytes  int
	// MaxBodyBytes bounds a request body, after decompression.
	MaxBodyBytes int64
	// Commit, when set, commits what Sink took since the last call, or says
	// why not; Sink's writes are then not taken as stored until Commit
	// returns nil, which lets many traces share a commit (see groupTraces).
	// Loader must then see what Sink took before it was committed.
	// sqlite.Batch does both (Load, Commit). Nil: each trace is stored
	// once Sink has taken it.
	Commit func(ctx context.Context) error
	// Detect, when set, runs the detectors on a trace before Sink takes it,
	// adding their findings: it runs on several traces at once, ahead of
	// the store, where detectors in Sink would run one trace at a time.
	Detect func(t *trace.Trace)
	// Stored is called after each trace is stored, or merged into the stored
	// one (or found already stored whole).
	Stored func(t *trace.Trace)
	Log    *slog.Logger
}

// Defaults.
const (
	DefaultRootWait     = 2 * time.Second
	DefaultIdleTimeout  = 30 * time.Second
	DefaultDrainTimeout = time.Minute
	DefaultMaxTraces    = 10_000
	DefaultMaxSpans     = 200_000
	DefaultMaxBytes     = 256 << 20
	DefaultMaxBodyBytes = 32 << 20
)

// Stats counts what a receiver did.
type Stats struct {
	Requests      int64 // requests answered 200
	Spans         int64 // spans accepted
	RejectedSpans int64 // spans refused: no ids, already stored, or in a request refused
	Throttled     int64 // requests refused with 429: the limits are reached
	Unavailable   int64 // requests refused with 503 while the store failed
	Stored        int64 // traces stored, merges included
	Merged        int64 // of which late spans merged into a stored trace
	NotStored     int64 // traces with no agent content or nothing new, cut off at shutdown, or refused by the sink
	StoreRetries  int64 // store attempts that failed and were retried
	Lost          int64 // acknowledged traces given up: a lasting store error, or still queued when shutdown gave up
	Replayed      int64 // requests replayed from the spool on start
	OpenTraces    int   // traces held now, including those waiting to be stored
	OpenSpans     int
	OpenBytes     int
	Waiting       int   // of the open traces, those handed to the store and not yet stored
	RequestBytes  int64 // memory counted for requests being read and decoded
	SpoolBytes    int64 // size of the spool's files
}

// Receiver assembles traces from OTLP/HTTP requests.
type Receiver struct {
	cfg   Config
	spool *spool // nil unless Config.Spool

	mu      sync.Mutex
	open    map[pcommon.TraceID]*openTrace
	recent  recentIDs    // traces already handed to the store, with their spans
	queue   []*openTrace // complete traces, to the store, oldest first
	closed  bool         // no more traces will be queued
	wake    chan struct{}
	failing time.Time // while the store fails: when it is tried next
	stats   Stats
}

// openTrace is one trace being assembled.
type openTrace struct {
	id     pcommon.TraceID
	spans  []otel.Span
	ids    map[pcommon.SpanID]bool
	bytes  int
	format string
	root   bool
	late   bool // spans of a trace already handed to the store
	// ifStored marks a trace cut off at shutdown without its root: stored
	// only as late spans of a trace the store holds (one stored before a
	// restart, which the receiver cannot know of until it asks).
	ifStored bool
	last     time.Time
	// writing counts requests with spans here that are being written to the
	// spool: the trace is not handed on before they are durable.
	writing int
	entries []uint64 // the spool entries holding its spans
	// prep is its mapping, started ahead of the store worker (see ahead);
	// only that worker sets it.
	prep *prepared
	// wrote says the trace was handed to the sink (wroteMerge: merged
	// into the stored one) in a group whose commit then failed, of which
	// the store may have committed part all the same.
	wrote, wroteMerge bool
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
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
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
	if cfg.Transient == nil {
		cfg.Transient = func(error) bool { return true }
	}
	return &Receiver{
		cfg:    cfg,
		open:   map[pcommon.TraceID]*openTrace{},
		recent: newRecentIDs(cfg.MaxTraces, cfg.MaxSpans),
		wake:   make(chan struct{}, 1),
	}
}

// Stats returns the counts so far.
func (r *Receiver) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Waiting = len(r.queue)
	if r.spool != nil {
		s.SpoolBytes = r.spool.size()
	}
	return s
}

// Serve answers OTLP/HTTP on ln until ctx is done, then shuts down: it
// finishes the requests in flight and stores the complete traces. With a
// spool, what it holds is replayed first.
func (r *Receiver) Serve(ctx context.Context, ln net.Listener) error {
	if r.cfg.Spool != "" {
		sp, err := openSpool(r.cfg.Spool, r.cfg.Log)
		if err != nil {
			ln.Close()
			return err
		}
		defer sp.close()
		if err := r.replay(sp); err != nil {
			ln.Close()
			return err
		}
		r.mu.Lock()
		r.spool = sp
		r.mu.Unlock()
	}
	mux := http.NewServeMux()
	mux.Handle(Path, r)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute}
	// Storing outlives ctx: what was accepted is stored even while shutting
	// down, until DrainTimeout has passed with the store still failing.
	storeCtx, giveUp := context.WithCancel(context.WithoutCancel(ctx))
	defer giveUp()
	stored := make(chan struct{})
	jobs := make(chan *prepared, prepTraces)
	for range runtime.GOMAXPROCS(0) {
		go r.prepare(jobs)
	}
	go func() {
		defer close(stored)
		defer close(jobs)
		r.store(storeCtx, jobs)
	}()
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
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.signal()
	select {
	case <-stored:
	case <-time.After(r.cfg.DrainTimeout):
		giveUp()
		<-stored
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// flush hands complete traces to the store; at shutdown, every trace whose
// root arrived, and the others to be merged if the store holds their trace,
// dropped otherwise (with a spool, they stay in it).
func (r *Receiver) flush(now time.Time, final bool) {
	var out []*openTrace
	r.mu.Lock()
	for id, ot := range r.open {
		idle := now.Sub(ot.last)
		complete := ot.root || ot.late
		switch {
		case ot.writing > 0:
			continue // its spans are not durable yet
		case complete && (final || idle >= r.cfg.RootWait), !final && idle >= r.cfg.IdleTimeout:
			out = append(out, ot)
		case final && r.cfg.Loader != nil:
			ot.ifStored = true
			out = append(out, ot)
		case final:
			r.stats.NotStored++
			r.release(ot)
			r.cutOff(ot)
		default:
			continue
		}
		delete(r.open, id)
		r.recent.add(id, ot.ids)
	}
	// Oldest first, so the store sees traces in the order they went quiet.
	slices.SortFunc(out, func(a, b *openTrace) int { return a.last.Compare(b.last) })
	r.queue = append(r.queue, out...)
	r.mu.Unlock()
	if len(out) > 0 {
		r.signal()
	}
}

// cutOff reports a trace without its root at shutdown, which is not stored;
// with a spool it stays there, to be completed after the next start.
func (r *Receiver) cutOff(ot *openTrace) {
	if r.spool != nil {
		ot.entries = nil
		r.cfg.Log.Warn("trace cut off at shutdown, not stored: its root span never arrived; kept in the spool for the next start", "trace", ot.id.String(), "spans", len(ot.spans))
		return
	}
	r.cfg.Log.Warn("trace cut off at shutdown, not stored: its root span never arrived", "trace", ot.id.String(), "spans", len(ot.spans))
}

// release gives back what a trace held; r.mu is held.
func (r *Receiver) release(ot *openTrace) {
	r.stats.OpenTraces--
	r.stats.OpenSpans -= len(ot.spans)
	r.stats.OpenBytes -= ot.bytes
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
	if retry := r.storeDown(time.Now()); retry > 0 {
		r.refuse(w, enc, refusal{status: http.StatusServiceUnavailable, retry: retry,
			why: "faultline receive cannot write to its store (is another process holding the database?); retry later"}, -1)
		return
	}
	g := r.admit()
	defer g.release()
	body, no := r.readBody(w, req, g)
	if no != nil {
		r.refuse(w, enc, *no, -1)
		return
	}
	td, err := enc.decode(body)
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
	a := r.accept(spans, enc.format(), time.Now(), g, r.spool != nil)
	if a.refused != nil {
		r.refuse(w, enc, *a.refused, td.SpanCount())
		return
	}
	if r.spool != nil && len(a.traces) > 0 {
		if err := r.spoolRequest(enc, body, a.traces); err != nil {
			r.cfg.Log.Error("writing to the spool", "err", err)
			r.refuse(w, enc, refusal{status: http.StatusServiceUnavailable, retry: time.Second, why: "faultline receive could not write the request to its spool: " + err.Error()}, 0)
			return
		}
	}
	if a.late > 0 {
		problems = append(problems, fmt.Sprintf("%d spans arrived after their trace was stored and are in it already; not stored again", a.late))
		r.cfg.Log.Info("spans arrived again after their trace was stored; rejected as duplicates", "spans", a.late)
	}
	if noIDs > 0 {
		r.cfg.Log.Warn("spans without trace or span id rejected", "spans", noIDs, "first", problems[0])
	}
	r.mu.Lock()
	r.stats.Requests++
	r.stats.Spans += int64(len(spans) - a.late)
	r.stats.RejectedSpans += int64(a.late + noIDs)
	r.mu.Unlock()
	writeResponse(w, enc, int64(a.late+noIDs), problems)
}

// refusal is why a request is refused whole.
type refusal struct {
	status int           // 413, 429 or 503
	retry  time.Duration // when it may be sent again, for 429 and 503
	why    string
}

// refuse answers a request refused whole, counting its spans (-1: not
// decoded, so not counted) as rejected.
func (r *Receiver) refuse(w http.ResponseWriter, enc encoding, no refusal, spans int) {
	r.mu.Lock()
	if spans > 0 {
		r.stats.RejectedSpans += int64(spans)
	}
	switch no.status {
	case http.StatusServiceUnavailable:
		r.stats.Unavailable++
	case http.StatusTooManyRequests:
		r.stats.Throttled++
	}
	r.mu.Unlock()
	code := codeInvalidArgument
	if no.retry > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(no.retry.Seconds()))))
		code = codeResourceExhausted
		if no.status == http.StatusServiceUnavailable {
			code = codeUnavailable
		}
	}
	writeStatus(w, enc, no.status, code, no.why)
}

// accepted is what accept did with a request's spans.
type accepted struct {
	refused *refusal          // the request was refused whole
	late    int               // spans already stored (duplicates), rejected
	traces  []pcommon.TraceID // the traces given spans (retries of spans they hold included)
}

// accept adds a request's spans to their traces, all or none, giving back
// what the request's admission reserved (g). Spans of a trace already
// handed to the store start a late trace, merged into the stored one;
// those the stored trace holds already are rejected. With writing, the
// traces that take spans wait for the request to be spooled (see spooled).
func (r *Receiver) accept(spans []otel.Span, format string, now time.Time, g *grant, writing bool) accepted {
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
	g.releaseLocked()
	fresh := map[pcommon.TraceID]bool{}
	for i := range spans {
		id := spans[i].TraceID
		if r.open[id] == nil && !fresh[id] && !r.recent.hasSpan(id, spans[i].SpanID) {
			fresh[id] = true
			newTraces++
		}
	}
	c, s := r.cfg, &r.stats
	switch {
	case g == nil:
		// Replayed from the spool: it was accepted before.
	case len(spans) > c.MaxSpans || size > c.MaxBytes || newTraces > c.MaxTraces:
		return accepted{refused: &refusal{status: http.StatusRequestEntityTooLarge, why: fmt.Sprintf("request of %d spans (%d bytes held) exceeds the receiver's limits (%d spans, %d bytes, %d traces)",
			len(spans), size, c.MaxSpans, c.MaxBytes, c.MaxTraces)}}
	case s.OpenSpans+len(spans) > c.MaxSpans || int64(s.OpenBytes+size)+s.RequestBytes > int64(c.MaxBytes) || s.OpenTraces+newTraces > c.MaxTraces:
		return accepted{refused: &refusal{status: http.StatusTooManyRequests, retry: r.nextFlush(now),
			why: "faultline receive holds as many open traces or spans as it may; retry later"}}
	}
	var out accepted
	for i, sp := range spans {
		ot := r.open[sp.TraceID]
		if ot == nil {
			if r.recent.hasSpan(sp.TraceID, sp.SpanID) {
				out.late++
				continue
			}
			ot = &openTrace{id: sp.TraceID, ids: map[pcommon.SpanID]bool{}, format: format, late: r.recent.has(sp.TraceID)}
			r.open[sp.TraceID] = ot
			s.OpenTraces++
		}
		ot.last = now
		if !slices.Contains(out.traces, sp.TraceID) {
			out.traces = append(out.traces, sp.TraceID)
			if writing {
				ot.writing++
			}
		}
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
	return out
}

// nextFlush estimates when the earliest open trace will be handed to the
// store, freeing room; r.mu is held.
func (r *Receiver) nextFlush(now time.Time) time.Duration {
	next := r.cfg.IdleTimeout
	for _, ot := range r.open {
		wait := r.cfg.IdleTimeout
		if ot.root || ot.late {
			wait = r.cfg.RootWait
		}
		next = min(next, max(0, wait-now.Sub(ot.last)))
	}
	return max(next, time.Second)
}

// encoding is how a request was sent, and so how it is answered.
type encoding int

const (
	protoEncoding encoding = iota
	jsonEncoding
)

// decode reads a request body.
func (e encoding) decode(body []byte) (ptrace.Traces, error) {
	if e == jsonEncoding {
		return (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(body)
	}
	return (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(body)
}

// format names the ingest format of a trace sent this way.
func (e encoding) format() string {
	if e == jsonEncoding {
		return ingest.OTLPJSON{}.Name()
	}
	return ingest.OTLPProto{}.Name()
}

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
	codeUnavailable       = 14
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
