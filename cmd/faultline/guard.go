package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/export"
	"github.com/faultline/faultline/internal/guardproxy"
)

func (a *app) guardCommand() *cobra.Command {
	var policyPath, upstream, listen, decisionsPath, otlpSignal string
	cfg := guardproxy.Config{}
	cmd := &cobra.Command{
		Use:   "guard --upstream URL",
		Short: "Apply the study's interventions at run time: loop control, budgets, answer and verification gates",
		Long: `faultline guard applies the interventions the MAST study recommends to runs as they
happen, with the same detectors as offline analysis: loop control (FM-1.3), a step and
token budget with an explicit end (FM-1.5), an answer gate (FM-3.1) and a verification
gate (FM-3.2, FM-3.3) before the agent may finish, and a clarification branch for
ambiguous tasks (FM-2.2).

A policy (--policy FILE, YAML; see examples/guard.yaml) lists the rules, each with its
detectors or budget, thresholds, action (observe, annotate, inject, block) and message.
Without one, the built-in policy observes only.

faultline guard --upstream URL is an OpenAI-compatible proxy: point the agent's base URL
at --listen instead of the model's API. POST /v1/chat/completions and POST /v1/responses
(the Responses API; tools included in both) are guarded; every other path is forwarded
untouched. Requests go upstream with their headers
(Authorization among them). Each conversation is a session, named by the request header
X-Faultline-Session, else by the trace id of a W3C traceparent header, else by a hash of
its system and first user message. Each request's new messages (tool results, the user's)
are observed, then the model's answer; a history that no longer extends what the session
holds starts a new run of it. A session's requests are handled one at a time, as an agent
sends them: conversations that run in parallel with the same opening need the header or a
traceparent to be told apart. What each action does:
  annotate  the response header X-Faultline-Guard names each decision's rule, mode and
            action
  inject    the rule's message is added to the next request as a system message
            ("faultline guard: ..."); at a finish gate (the agent answers without a tool
            call and a gate rule fires) the model is asked again at once with the message,
            and the client gets that answer (the rule's max_fires bounds this, and at most
            3 asks again per request)
  block     403 with an OpenAI-style error (type faultline_guard, the rule's message), and
            the session is ended: its later requests are refused the same way
Streamed requests ("stream": true) pass chunk by chunk as they arrive; the answer is
rebuilt from the deltas and observed before the closing "data: [DONE]". The headers are
gone by then: an annotation is an SSE comment line (": faultline-guard rule=... mode=...
action=..."), a block an error event (data: {"error": {...}}) before [DONE], and an inject
at a finish gate waits for the next request.

The Responses API is guarded the same way. A request's instructions and input (a string,
or items: messages, function_call, function_call_output) are its steps, the response's
output (messages, function calls, reasoning summaries) the model's turn, which finishes
when it holds no function_call. A request with previous_response_id carries only what is
new: it continues the session of the response it names, when the proxy gave that response
(a request after an earlier response of the chain starts a new run), and its instructions,
resent, are new steps only when they changed. An inject adds an input item (a system
message, "faultline guard: ..."); asked again at a finish gate, the model is given its
answer (reasoning items left out) and the message as input items. A streamed response
passes event by event; its output is rebuilt from response.output_item.done and
response.completed and observed before response.completed is passed on, an annotation
is the same comment line and a block an error event (event: error, data: {"type":
"error", "code": rule, "message": ..., "error": {...}}).

An upstream that cannot be reached, or answers 2xx with something else than a chat
completion (a response), gives 502; one slower than --upstream-timeout gives 504; its other answers
pass as they are. When the guard itself fails (a body that is not JSON, a detector's
panic), the request passes untouched (fail_open, the default) or is refused with 500.
Sessions are bounded by the policy's max_sessions (least recently used evicted) and
session_idle. GET /faultline/guard/stats answers the counters as JSON.

Every decision is written, with --decisions FILE, as a JSON line; with --db (or
$FAULTLINE_DB), each session's run is stored as a trace of format "guard" whose findings
(source guard) are its decisions, at their steps: when it ends, is evicted, every 50
decisions, and at Ctrl-C, which finishes the requests in flight first.

With --otlp URL, every decision is posted as it is made to an OpenTelemetry collector
over OTLP/HTTP JSON: a log record named
gen_ai.evaluation.result to URL/v1/logs, with the attributes faultline export --format
otlp writes for a finding (the rule and action in gen_ai.evaluation.explanation,
faultline.trace_id the session's run), in the agent's trace when a traceparent named the
session. With --otlp-signal spans, each is a span under the step it cites, posted to
URL/v1/traces, for Phoenix, Langfuse or faultline receive, which take traces only. Posts go in the background, in batches of at most 100, every second; a
request never waits for them. A post that fails is logged and its decisions counted as
otlp_failed in the stats, not retried; at most 10000 decisions wait, the rest are
dropped and counted as otlp_dropped.`,
		Example: `  faultline guard --upstream https://api.openai.com --policy examples/guard.yaml
  OPENAI_BASE_URL=http://127.0.0.1:8089/v1 python my_agent.py
  faultline guard replay --policy examples/guard.yaml runs/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if upstream == "" {
				return errors.New("--upstream is required: the URL of the model's API, such as https://api.openai.com")
			}
			u, err := httpURL("--upstream", upstream)
			if err != nil {
				return err
			}
			cfg.Upstream = u
			if cfg.OTLP != "" {
				if _, err := httpURL("--otlp", cfg.OTLP); err != nil {
					return err
				}
			}
			switch otlpSignal {
			case "logs":
			case "spans":
				cfg.OTLPSpans = true
			default:
				return fmt.Errorf("--otlp-signal %q: want %s", otlpSignal, strings.Join(export.Signals, " or "))
			}
			if cfg.Policy, err = a.loadPolicy(policyPath); err != nil {
				return err
			}
			cfg.Log = a.log
			if decisionsPath != "" {
				f, err := os.OpenFile(decisionsPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
				if err != nil {
					return fmt.Errorf("--decisions: %w", err)
				}
				defer f.Close()
				cfg.Decisions = f
			}
			if cmd.Flags().Changed("db") || os.Getenv("FAULTLINE_DB") != "" {
				st, err := a.openStore(ctx)
				if err != nil {
					return err
				}
				defer st.Close()
				// A session's run is stored again as it grows; one that
				// starts over after an eviction or a restart stores fewer
				// steps under the same id, which is the run now.
				st.ReplaceFewerSteps(func(f ingest.FewerSteps) {
					a.log.Info("guard run replaced by a shorter one", "trace", f.ID, "stored", f.Stored, "steps", f.Incoming)
				})
				cfg.Store = st
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsLoopback() {
				a.log.Warn("listening beyond loopback: anyone who reaches this address can use the upstream with the credentials they send", "addr", ln.Addr().String())
			}
			p := guardproxy.New(cfg)
			fmt.Fprintf(a.stderr, "listening on http://%s, guarding %s and %s for %s with policy %s (Ctrl-C stops)\n", ln.Addr(), guardproxy.ChatPath, guardproxy.ResponsesPath, u.Redacted(), cfg.Policy.Name)
			err = p.Serve(ctx, ln)
			writeGuardStats(a.stderr, p.Stats())
			return err
		},
	}
	cmd.PersistentFlags().StringVar(&policyPath, "policy", "", "guard policy `FILE` (YAML); default: the built-in policy, observe only")
	f := cmd.Flags()
	f.StringVar(&upstream, "upstream", "", "the model's API to stand in front of, as a `URL` (request paths are appended to it)")
	f.StringVar(&listen, "listen", "127.0.0.1:8089", "address to listen on, as `HOST:PORT`")
	f.DurationVar(&cfg.Timeout, "upstream-timeout", guardproxy.DefaultTimeout, "longest exchange with the upstream, streams included: 504 beyond")
	f.StringVar(&decisionsPath, "decisions", "", "append every decision to `FILE` as a JSON line")
	f.StringVar(&cfg.OTLP, "otlp", "", "post every decision to the OTLP/HTTP endpoint at `URL` (such as http://localhost:4318)")
	f.StringVar(&otlpSignal, "otlp-signal", "logs", "with --otlp: post decisions as `logs` (gen_ai.evaluation.result events) or spans")
	cmd.AddCommand(a.guardReplayCommand(&policyPath))
	return cmd
}

// httpURL parses a flag's value, which must be an http:// or https:// URL.
func httpURL(flag, s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s %q: an http:// or https:// URL", flag, s)
	}
	return u, nil
}

// writeGuardStats says what the proxy did, as it stops.
func writeGuardStats(w io.Writer, s guardproxy.Stats) {
	decisions := 0
	for _, byAction := range s.Decisions {
		for _, n := range byAction {
			decisions += int(n)
		}
	}
	fmt.Fprintf(w, "guarded %d requests: %d decisions, %d sessions open at the end, %d evicted, %d passed unguarded and %d refused when the guard failed\n",
		s.Requests, decisions, s.OpenSessions, s.Evicted, s.FailOpen, s.FailClosed)
	if s.OTLPSent+s.OTLPFailed+s.OTLPDropped > 0 {
		fmt.Fprintf(w, "posted %d decisions over OTLP: %d more failed and %d were dropped\n", s.OTLPSent, s.OTLPFailed, s.OTLPDropped)
	}
}
