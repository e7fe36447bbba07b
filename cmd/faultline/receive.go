package main

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/pipeline"
	"github.com/faultline/faultline/internal/receive"
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
Spans arriving for a trace already stored are rejected and reported to the exporter.

Memory is bounded by --max-traces, --max-spans and --max-memory-mb: a request that
would exceed them gets 429 Too Many Requests with Retry-After (exporters retry), so
nothing accepted is dropped or cut short. Ctrl-C stops accepting, finishes the
requests in flight and stores every trace whose root arrived.

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
			var sink ingest.Sink = st
			if !noDetect {
				sink = pipeline.Detecting(st, detect.All, func(err error) { a.log.Error("detector finding rejected", "err", err) })
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsLoopback() {
				a.log.Warn("listening beyond loopback: anyone who reaches this address can write traces", "addr", ln.Addr().String())
			}
			cfg.Sink = sink
			cfg.Source = "otlp-http://" + ln.Addr().String()
			cfg.MaxBytes = maxMB << 20
			cfg.MaxBodyBytes = int64(maxBodyMB) << 20
			cfg.Log = a.log
			cfg.Stored = func(t *trace.Trace) {
				if !a.quiet {
					fmt.Fprintf(a.stdout, "stored %s  %s  %d steps  %s\n", t.ID, orDash(t.Model), len(t.Steps), foundModes(t.Findings))
				}
			}
			r := receive.New(cfg)
			fmt.Fprintf(a.stderr, "listening on http://%s%s (Ctrl-C stops, storing what is complete)\n", ln.Addr(), receive.Path)
			err = r.Serve(ctx, ln)
			s := r.Stats()
			fmt.Fprintf(a.stderr, "received %d spans in %d requests: stored %d traces, %d not stored, %d spans rejected, %d requests throttled\n",
				s.Spans, s.Requests, s.Stored, s.NotStored, s.RejectedSpans, s.Throttled)
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
	return cmd
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
