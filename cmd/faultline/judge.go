package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/judge"
	"github.com/faultline/faultline/internal/store"
)

// judgeFlags are the judge command's flags; each one set on the command
// line wins over the configuration file.
type judgeFlags struct {
	model, baseURL string
	apiKeyEnv      string
	concurrency    int
	samples        int
	rpm            float64
	timeout        time.Duration
	retries        int
	format         string
	temperature    float64
	seed           int
	maxTokens      int
	context        int
	where          []string
	force, dryRun  bool
	asJSON         bool
	// includeSystem sends to the model the traces whose detector findings
	// are system failures only, which are otherwise recorded as skipped.
	includeSystem bool
	queue         queueFlags // --queue, --status: see judgequeue.go
}

// Defaults of settings neither a flag nor the configuration file gives.
const (
	defaultConcurrency = 4
	defaultTimeout     = 5 * time.Minute
	defaultRetries     = 5
)

// judgeJSON is the JSON form of a judge run.
type judgeJSON struct {
	Source        string          `json:"source"`
	Model         string          `json:"model"`
	PromptVersion string          `json:"prompt_version"`
	Format        judge.Format    `json:"response_format"` // the format calls ended up using
	Selected      int             `json:"selected"`
	Progress      judge.Progress  `json:"progress"`
	Failures      []judge.Failure `json:"failures"`
	SystemOnly    []judge.Skip    `json:"system_only"` // traces not sent to the model, with why
}

func (a *app) judgeCommand() *cobra.Command {
	var f judgeFlags
	cmd := &cobra.Command{
		Use:   "judge [TRACE...|--where FILTER]",
		Short: "Annotate stored traces with all 14 MAST modes using an LLM judge",
		Long: `Ask an LLM, through any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM,
Ollama, LM Studio, Gemini's compatible endpoint), whether each stored trace shows each
of the 14 MAST failure modes, with the steps and a verbatim quote as evidence.
TRACE is a trace id or a unique prefix; without TRACE, every trace that --where
selects (all by default).

Each trace is shown with step ids (S12 is step 12 in faultline show), long tool
outputs cut with a marker, repeated outputs replaced by a reference, and the
detectors' findings as hints to confirm or reject. A trace too long for the model's
context is judged in overlapping windows, each with a summary of the ones before;
the windows' verdicts are merged (a mode is present at its earliest occurrence).

Every answer is checked: all 14 modes answered, cited steps exist, each quote occurs
in its cited steps. A failing answer gets one corrective retry that says exactly
what was wrong; if that fails too, the trace is recorded as failed (listed, counted,
exit status 1), never as "absent".

MAST describes what the agent did; a run that failed because of the harness or the
infrastructure (the model returned nothing, a tool server failed through no fault
of the agent's arguments, a rate limit, a context overflow) is a system failure
(SYS-1 to SYS-4), not a MAST mode. Two things follow:
- A trace whose detector findings are system failures only, and in which the
  agent never did anything (no message, reasoning or tool call), is not sent to
  the model: it is recorded as skipped, with the reason, and gets no MAST
  verdicts (a skipped trace is not "judged, no failure"). A run in which the
  agent acted before the failure is judged. --include-system-failures sends
  the skipped ones to the model anyway.
- The judge may answer that a run is a system failure, with its SYS code, steps
  and a verbatim quote, checked like any finding. It is stored as a finding of
  that code from the judge's source, and no MAST verdict is kept for the trace.

Annotations are stored as findings of source judge:<model> (absent verdicts too),
each trace in its own transaction as soon as it is done, with a record of status,
windows, samples, agreement, tokens and cost. Interrupting loses nothing finished;
running again continues with what is left: traces already judged by the same source
with the same prompt are skipped unless --force, and answers are cached by prompt
hash, model and parameters, so a repeat makes no call. Use the annotations with
show --source judge, analyze --source judge:<model> and eval --source judge:<model>.

--where selects traces with key=value pairs separated by commas, keyed by the names
of the filters of ls, report and export, with their meaning: model (its canonical name
or any way it is written), system, scenario, trace-format, outcome (success, failure,
unknown), mode (present on the trace), source (annotated the trace), search (words in
one step), path (a file or directory the traces were ingested from) and limit. model,
system, scenario, trace-format, mode, source and path may be given more than once
(mode: all of them; the others: any). Several --where flags combine.

Settings come from flags, then the judge section of the configuration file
(faultline --config FILE, or ./faultline.yaml when present), then defaults:

  judge:
    model: gpt-4.1-mini
    base_url: https://api.openai.com/v1     # any OpenAI-compatible API root
    api_key_env: OPENAI_API_KEY             # the variable holding the key, never the key
    concurrency: 8
    samples: 1
    requests_per_minute: 300                # client-side rate limit; 0 = none
    timeout: 5m                             # per call; a slower call is retried
    retries: 5                              # on 429 (honouring Retry-After), 5xx, timeouts
    response_format: json_schema            # json_schema | json_object | none
    temperature: 0                          # negative: send none (models that refuse it)
    seed: 1                                 # sample k is sent seed+k
    max_tokens: 0                           # cap on each answer; 0 = none
    render: {output_chars: 2000, text_chars: 4000, task_chars: 32000}
    models:
      gpt-4.1-mini: {context: 1000000, price: {input: 0.40, output: 1.60}}
      llama3.1:8b: {context: 32768, output_reserve: 4096}

Model settings: context (tokens, default 128000), output_reserve (tokens kept for
the answer, default 8192), encoding (tiktoken vocabulary for estimates, default
o200k_base), price (dollars per million input and output tokens; without one the
cost is shown as unknown). The API key is read from $FAULTLINE_API_KEY, then
$OPENAI_API_KEY (or the variable api_key_env / --api-key-env names); local servers
need none. It is never stored, printed or logged.

A progress line on stderr shows traces done, failures, skipped traces, ETA, calls,
tokens and cost. --dry-run calls nothing: it prints the prompt of the first selected
trace that would be judged and its token estimate, then how many of the selected
traces would be judged and how many skipped as system failures only, with the
prompt tokens of each share. --json prints {source, model, prompt_version,
response_format, selected, progress, failures, system_only}.`,
		Example: `  export OPENAI_API_KEY=...
  faultline judge --model gpt-4.1-mini --where model=gpt-oss-120b,outcome=failure
  faultline judge --model llama3.1:8b --base-url http://localhost:11434/v1 --concurrency 2 019bc2a7
  faultline judge --model gemini-2.5-flash --base-url https://generativelanguage.googleapis.com/v1beta/openai --api-key-env GEMINI_API_KEY
  faultline judge --config judge.yaml --samples 3 --temperature 0.7
  faultline judge --dry-run --model gpt-4.1-mini 019bc2a7
  faultline analyze --source judge:gpt-4.1-mini`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runJudge(cmd, args, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model name, as the endpoint knows it")
	fl.StringVar(&f.baseURL, "base-url", judge.DefaultClientOptions.BaseURL, "API root of an OpenAI-compatible endpoint")
	fl.StringVar(&f.apiKeyEnv, "api-key-env", "", "environment variable holding the API key (default FAULTLINE_API_KEY, then OPENAI_API_KEY)")
	fl.IntVar(&f.concurrency, "concurrency", defaultConcurrency, "traces judged at once")
	fl.IntVar(&f.samples, "samples", 1, "judgements per trace, combined by majority vote per mode")
	fl.Float64Var(&f.rpm, "rpm", 0, "at most this many requests per minute (0: no client-side limit)")
	fl.DurationVar(&f.timeout, "timeout", defaultTimeout, "time limit of one call")
	fl.IntVar(&f.retries, "retries", defaultRetries, "retries of a call after a 429, a 5xx, a timeout or a network error")
	fl.StringVar(&f.format, "response-format", string(judge.FormatSchema), "how to ask for JSON: json_schema, json_object or none (falls back when the endpoint rejects it)")
	fl.Float64Var(&f.temperature, "temperature", 0, "sampling temperature (negative: send none)")
	fl.IntVar(&f.seed, "seed", 0, "seed sent with each call (sample k gets seed+k; default: none)")
	fl.IntVar(&f.maxTokens, "max-tokens", 0, "cap on each answer's tokens (0: none)")
	fl.IntVar(&f.context, "context", 0, "the model's context window in tokens (default: the config's, else 128000)")
	fl.StringArrayVar(&f.where, "where", nil, "select traces: key=value,... keyed by the filters of ls ("+strings.Join(filterNames(), ", ")+")")
	fl.BoolVar(&f.force, "force", false, "judge again traces already judged by this model with this prompt (cached answers are reused)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the first selected trace's prompt, the token estimate and how many traces would be skipped; call nothing")
	fl.BoolVar(&f.includeSystem, "include-system-failures", false, "also judge traces whose detector findings are system failures only (SYS-1 …), which are otherwise skipped")
	fl.BoolVar(&f.asJSON, "json", false, "print the result as JSON")
	f.queue.register(cmd)
	return cmd
}

// settings merges the judge section of the settings file at path (none
// when "") under the flags set on the command line.
func (f *judgeFlags) settings(cmd *cobra.Command, path string) (*judge.Config, error) {
	cfg := &judge.Config{}
	if path != "" {
		var err error
		if cfg, err = judge.LoadConfig(path); err != nil {
			return nil, err
		}
	}
	changed := cmd.Flags().Changed
	override := func(name string, apply func()) {
		if changed(name) {
			apply()
		}
	}
	override("model", func() { cfg.Model = f.model })
	override("base-url", func() { cfg.BaseURL = f.baseURL })
	override("api-key-env", func() { cfg.APIKeyEnv = f.apiKeyEnv })
	override("concurrency", func() { cfg.Concurrency = f.concurrency })
	override("samples", func() { cfg.Samples = f.samples })
	override("rpm", func() { cfg.RequestsPerMinute = f.rpm })
	override("timeout", func() { cfg.Timeout = f.timeout })
	override("retries", func() { cfg.Retries = &f.retries })
	override("response-format", func() { cfg.ResponseFormat = f.format })
	override("temperature", func() { cfg.Temperature = &f.temperature })
	override("seed", func() { cfg.Seed = &f.seed })
	override("max-tokens", func() { cfg.MaxTokens = f.maxTokens })
	override("context", func() {
		if cfg.Models == nil {
			cfg.Models = map[string]judge.ModelConfig{}
		}
		m := cfg.Models[cfg.Model]
		m.Context = f.context
		cfg.Models[cfg.Model] = m
	})
	if cfg.BaseURL == "" {
		cfg.BaseURL = judge.DefaultClientOptions.BaseURL
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = defaultConcurrency
	}
	if cfg.Samples <= 0 {
		cfg.Samples = 1
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = defaultTimeout
	}
	if cfg.Retries == nil {
		retries := defaultRetries
		cfg.Retries = &retries
	}
	if cfg.ResponseFormat == "" {
		cfg.ResponseFormat = string(judge.FormatSchema)
	}
	if _, err := judge.ParseFormat(cfg.ResponseFormat); err != nil {
		return nil, err
	}
	if cfg.Temperature == nil {
		zero := 0.0
		cfg.Temperature = &zero
	}
	return cfg, nil
}

// judgeClient is the client of an endpoint the settings cfg name, asked
// with key, in format, over at most conns connections.
func (a *app) judgeClient(cfg *judge.Config, key string, format judge.Format, conns int) *judge.OpenAI {
	return judge.NewOpenAI(judge.ClientOptions{
		BaseURL: cfg.BaseURL, APIKey: key, Format: format, Timeout: cfg.Timeout, Retries: *cfg.Retries,
		RequestsPerMinute: cfg.RequestsPerMinute, Conns: conns, Log: a.log,
	})
}

// options turns settings into a run's options.
func judgeOptions(cfg *judge.Config) judge.Options {
	m := cfg.ModelSettings(cfg.Model)
	opt := judge.Options{
		Model: cfg.Model, Samples: cfg.Samples, Concurrency: cfg.Concurrency, Seed: cfg.Seed, MaxTokens: cfg.MaxTokens,
		Budget: judge.Budget{Context: m.Context, Output: m.OutputReserve}, Render: cfg.RenderLimits(), Price: m.Price,
		HintSource: detect.Source,
	}
	if *cfg.Temperature >= 0 {
		opt.Temperature = cfg.Temperature
	}
	return opt
}

// apiKey reads the API key from the environment: the variable the settings
// name, else FAULTLINE_API_KEY, else OPENAI_API_KEY. It returns the key and
// the variable it came from, or the variables tried, for messages.
func apiKey(envName string) (string, string) {
	names := []string{"FAULTLINE_API_KEY", "OPENAI_API_KEY"}
	if envName != "" {
		names = []string{envName}
	}
	for _, n := range names {
		if v := strings.TrimSpace(os.Getenv(n)); v != "" {
			return v, "$" + n
		}
	}
	return "", "$" + strings.Join(names, " or $")
}

func (a *app) runJudge(cmd *cobra.Command, args []string, f *judgeFlags) error {
	ctx := cmd.Context()
	if f.queue.status {
		return a.judgeStatus(ctx, f.asJSON)
	}
	file, err := a.settings()
	if err != nil {
		return err
	}
	cfg, err := f.settings(cmd, file.Path)
	if err != nil {
		return err
	}
	if cfg.Model == "" && !f.dryRun {
		return errors.New("no model: give --model or set judge.model in the configuration file")
	}
	if cfg.Samples > 1 && *cfg.Temperature == 0 && !a.quiet {
		fmt.Fprintf(a.stderr, "notice: %d samples at temperature 0 may well be one answer %d times; set --temperature (e.g. 0.7) for independent samples\n", cfg.Samples, cfg.Samples)
	}
	if len(args) > 0 && len(f.where) > 0 {
		return errors.New("give trace ids or --where, not both")
	}
	filter, err := parseWhere(f.where, a.stderr)
	if err != nil {
		return err
	}
	filter.Aliases = file.Models
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	var traces []store.Summary
	if len(args) > 0 {
		seen := map[string]bool{}
		for _, arg := range args {
			id, err := st.Resolve(ctx, arg)
			if err != nil {
				return err
			}
			if !seen[id] {
				seen[id] = true
				traces = append(traces, store.Summary{ID: id})
			}
		}
	} else if traces, err = st.List(ctx, filter); err != nil {
		return err
	}
	if len(traces) == 0 {
		why, err := noMatch(ctx, st, filter)
		if err != nil {
			return err
		}
		fmt.Fprintln(a.stderr, why)
		return nil
	}
	key, keyFrom := apiKey(cfg.APIKeyEnv)
	if !f.dryRun && !f.queue.enqueue { // workers have keys of their own
		// Before any work: a missing key or an unknown host would otherwise
		// fail every call, each after its retries.
		if err := judge.Preflight(ctx, cfg.BaseURL, key, keyFrom+" (or name another variable with --api-key-env)"); err != nil {
			return err
		}
	}
	opt := judgeOptions(cfg)
	opt.IncludeSystemFailures = f.includeSystem
	opt.Force = f.force
	tok, err := judge.NewTokenizer(cfg.ModelSettings(cfg.Model).Encoding)
	if err != nil {
		return err
	}
	// The detectors' findings are offered as hints and decide which traces
	// are system failures only; make sure they are the current detectors'.
	if err := a.redetect(cmd, st, traces); err != nil {
		return err
	}
	if f.dryRun {
		return a.judgeDryRun(cmd, st, traces, tok, opt)
	}
	if f.queue.enqueue {
		return a.enqueueJudge(ctx, st, cfg, opt, f.force, f.asJSON, traces)
	}
	format, _ := judge.ParseFormat(cfg.ResponseFormat)
	client := a.judgeClient(cfg, key, format, cfg.Concurrency)
	opt.Log = a.log
	runner := judge.NewRunner(client, st, tok, opt)
	ids := make([]string, len(traces))
	for i, t := range traces {
		ids[i] = t.ID
	}
	stop := a.showProgress(runner)
	runErr := runner.Run(ctx, ids)
	stop()
	p := runner.Progress()
	failures := runner.Failures()
	for _, fl := range failures {
		fmt.Fprintf(a.stderr, "error: trace %s: %s\n", fl.Trace, fl.Error)
	}
	if runErr != nil {
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("interrupted after %d of %d traces; their judgements are stored, run the same command again to continue", p.Done, p.Total)
		case errors.Is(runErr, judge.ErrFatal) && key == "":
			return fmt.Errorf("judge: %w (no API key: set %s)", runErr, keyFrom)
		case errors.Is(runErr, judge.ErrFatal):
			return fmt.Errorf("judge: %w (check --model, --base-url and the key in %s)", runErr, keyFrom)
		}
		return fmt.Errorf("judge: %w", runErr)
	}
	if f.asJSON {
		if failures == nil {
			failures = []judge.Failure{}
		}
		skips := runner.Skips()
		if skips == nil {
			skips = []judge.Skip{}
		}
		out := judgeJSON{Source: judge.Source(cfg.Model), Model: cfg.Model, PromptVersion: runner.Version(), Format: client.Format(),
			Selected: len(ids), Progress: p, Failures: failures, SystemOnly: skips}
		if err := writeJSON(a.stdout, out); err != nil {
			return err
		}
	} else {
		judged := p.Done - p.SystemOnly
		fmt.Fprintf(a.stdout, "judged %d traces with %s (source %s, prompt %s): %d ok, %d failed, %d already judged, %d skipped as system failures only\n",
			judged, cfg.Model, judge.Source(cfg.Model), runner.Version(), judged-p.Failed, p.Failed, p.Skipped, p.SystemOnly)
	}
	if p.Failed > 0 {
		return errDataProblems
	}
	return nil
}

// showProgress prints the runner's progress line on stderr until the
// returned function is called, which prints the final line: in place every
// second on a terminal, otherwise a line every ten seconds.
func (a *app) showProgress(runner *judge.Runner) func() {
	if a.quiet {
		return func() {}
	}
	terminal := isTerminal(a.stderr)
	every := 10 * time.Second
	if terminal {
		every = time.Second
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if terminal {
					fmt.Fprintf(a.stderr, "\r\033[K%s", runner.Progress())
				} else {
					fmt.Fprintln(a.stderr, runner.Progress())
				}
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
		if terminal {
			fmt.Fprint(a.stderr, "\r\033[K")
		}
		fmt.Fprintln(a.stderr, runner.Progress())
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// judgeDryRun prints what judging the selected traces would send and
// skip, calling nothing. A trace that cannot be planned (a step too large
// for the context) makes the exit status 1, as the run would record it as
// failed.
func (a *app) judgeDryRun(cmd *cobra.Command, st database, traces []store.Summary, tok *judge.Tokenizer, opt judge.Options) error {
	sel := judge.NewSelection(tok, opt)
	for _, s := range traces {
		t, err := st.Load(cmd.Context(), s.ID)
		if err != nil {
			return err
		}
		sel.Add(t)
	}
	if err := sel.Write(a.stdout); err != nil {
		return err
	}
	if len(sel.Failures) > 0 {
		return errDataProblems
	}
	return nil
}
