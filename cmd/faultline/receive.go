package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	sqlitedriver "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/faultline/faultline/internal/receive"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/store/postgres"
	"github.com/faultline/faultline/trace"
)

func (a *app) receiveCommand() *cobra.Command {
	var addr string
	var noDetect bool
	var maxMB, maxBodyMB int
	cfg := receive.Config{}
	cmd := &cobra.Command{
		Use:   "receive",
		Short: "Receive OpenTelemetry traces live (OTLP/HTTP) and store them",
		Long: `Listen for OpenTelemetry traces on OTLP/HTTP (POST /v1/traces, protobuf or JSON,
gzip or not), as any OTLP exporter sends them. Spans are read with the GenAI semantic
conventions (current and older) and OpenInference, like OTLP files are by ingest.

A trace is stored once complete: its root span arrived and no span of it came for
--root-wait; a trace whose root never comes is stored as it is after --idle-timeout.
Detectors run on each trace unless --no-detect, and each stored trace is printed.
Spans arriving for a trace already stored are merged into it: it keeps its steps
and gains theirs in their place; a span it holds already (an exporter's retry)
adds nothing.

Memory is bounded by --max-traces, --max-spans and --max-memory-mb, which also
counts the requests being read and decoded, before they are decoded: a request
that would exceed them gets 429 Too Many Requests with Retry-After (exporters
retry), or 413 when it never could fit, so nothing accepted is dropped or cut short.

What a 200 answer promises:
  by default   an acknowledged trace is kept in memory until stored: it survives
               a busy store (another process holding the database's write lock:
               it is retried with backoff while requests get 503 with Retry-After)
               but not a crash or kill of this process.
  --spool DIR  (durable mode) each request is written to DIR and synced to disk
               before its 200: an acknowledged trace survives kill -9 and power
               loss, and is stored when the receiver starts again on the same DIR
               (replaying is idempotent: what is stored already is not repeated).
               Requests are answered more slowly, by one disk sync each.
Ctrl-C stops accepting, finishes the requests in flight and stores every trace
whose root arrived, waiting up to --drain-timeout for a busy store; what is then
still not stored is lost by default, and stays in the spool with --spool.

The default address is loopback only: the receiver has no authentication.`,
		Example: `  faultline receive
  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 python my_agent.py
  faultline receive --addr 127.0.0.1:4318 --root-wait 5s --idle-timeout 2m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			// Traces share transactions, committed by the receiver a group
			// at a time; the merge of late spans reads through the batch.
			batch := st.Batch()
			defer batch.Close(context.WithoutCancel(ctx))
			if !noDetect {
				// The receiver runs them, on several traces at once.
				ds, err := a.detectors()
				if err != nil {
					return err
				}
				cfg.Detect = receive.Detectors(ds, a.rejectedFinding)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsLoopback() {
				a.log.Warn("listening beyond loopback: anyone who reaches this address can write traces", "addr", ln.Addr().String())
			}
			cfg.Sink = batch
			cfg.Loader = batch
			cfg.Commit = batch.Commit
			cfg.Transient = transientStoreError
			cfg.Source = "otlp-http://" + ln.Addr().String()
			cfg.MaxBytes = maxMB << 20
			cfg.MaxBodyBytes = int64(maxBodyMB) << 20
			cfg.Log = a.log
			cfg.Stored = func(t *trace.Trace) {
				if !a.quiet {
					// The id and model came over the network: no control characters reach the terminal.
					fmt.Fprintf(a.stdout, "stored %s  %s  %d steps  %s\n", report.Printable(t.ID), report.Printable(orDash(t.Model)), len(t.Steps), foundModes(t.Findings))
				}
			}
			r := receive.New(cfg)
			mode := "acknowledged traces are held in memory until stored"
			if cfg.Spool != "" {
				mode = "durable: each request is synced to " + cfg.Spool + " before its 200"
			}
			fmt.Fprintf(a.stderr, "listening on http://%s%s (%s; Ctrl-C stops, storing what is complete)\n", ln.Addr(), receive.Path, mode)
			err = r.Serve(ctx, ln)
			s := r.Stats()
			fmt.Fprintf(a.stderr, "received %d spans in %d requests: stored %d traces, %d not stored, %d spans rejected, %d requests throttled\n",
				s.Spans, s.Requests, s.Stored, s.NotStored, s.RejectedSpans, s.Throttled)
			if s.Merged+s.Unavailable+s.StoreRetries+s.Lost+s.Replayed > 0 {
				fmt.Fprintf(a.stderr, "%d merged into stored traces, %d requests replayed from the spool; the store failed %d times (%d requests refused meanwhile); %d acknowledged traces not stored\n",
					s.Merged, s.Replayed, s.StoreRetries, s.Unavailable, s.Lost)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:4318", "address to listen on, as `HOST:PORT` (4318 is OTLP/HTTP's port)")
	f.DurationVar(&cfg.RootWait, "root-wait", receive.DefaultRootWait, "after a trace's root span arrives, wait this long for late spans before storing it")
	f.DurationVar(&cfg.IdleTimeout, "idle-timeout", receive.DefaultIdleTimeout, "store a trace whose root span never arrives after this long without a new span")
	f.IntVar(&cfg.MaxTraces, "max-traces", receive.DefaultMaxTraces, "most traces held open at once")
	f.IntVar(&cfg.MaxSpans, "max-spans", receive.DefaultMaxSpans, "most spans held at once")
	f.IntVar(&maxMB, "max-memory-mb", receive.DefaultMaxBytes>>20, "most span content held at once, in MiB")
	f.IntVar(&maxBodyMB, "max-body-mb", receive.DefaultMaxBodyBytes>>20, "largest request body, decompressed, in MiB")
	f.BoolVar(&noDetect, "no-detect", false, "store traces without running the detectors")
	f.StringVar(&cfg.Spool, "spool", "", "durable mode: write each request to this `DIR`, synced, before answering it, and replay what is not stored on start (default: off; acknowledged traces are held in memory)")
	f.DurationVar(&cfg.DrainTimeout, "drain-timeout", receive.DefaultDrainTimeout, "at shutdown, wait this long for a busy store to take the acknowledged traces")
	return cmd
}

// transientStoreError says whether a store error may pass: SQLite's busy
// and locked (another process writing), a full disk, an I/O error; for
// PostgreSQL, what postgres.Transient names (the server out of reach or
// restarting, out of connections, a lost serialization conflict).
func transientStoreError(err error) bool {
	if postgres.Transient(err) {
		return true
	}
	var e *sqlitedriver.Error
	if errors.As(err, &e) {
		switch e.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR:
			return true
		}
		return false
	}
	return errors.Is(err, context.DeadlineExceeded)
}

// foundModes lists the modes of the findings on a trace, or says there are none.
func foundModes(findings []trace.Finding) string {
	var codes []string
	for _, f := range findings {
		if f.Verdict == trace.Present && f.Mode != "" && !slices.Contains(codes, f.Mode) {
			codes = append(codes, f.Mode)
		}
	}
	if len(codes) == 0 {
		return "no findings"
	}
	return strings.Join(codes, " ")
}
