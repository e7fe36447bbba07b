package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/faultline/faultline/internal/store/sqlite"

	"github.com/faultline/faultline/internal/judge"
	"github.com/faultline/faultline/internal/judge/judgetest"
	"github.com/faultline/faultline/internal/store"
)

// runCtx is cli.run with a context of the caller's.
func (c *cli) runCtx(ctx context.Context, args ...string) (string, string, int) {
	c.t.Helper()
	var out, errb bytes.Buffer
	code := run(ctx, append([]string{"--db", c.db}, args...), strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// judgeCLI is a database with the example cohort and a fake endpoint.
func judgeCLI(t *testing.T, script func(judgetest.Call) judgetest.Reply) (*cli, *judgetest.Server) {
	t.Helper()
	// Never pick up a real key from the environment of whoever runs the tests.
	t.Setenv("FAULTLINE_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	c := newCLI(t)
	if _, errOut, code := c.run("", "ingest", "-q", examples); code != exitOK {
		t.Fatalf("ingest: %s", errOut)
	}
	srv := judgetest.NewServer(script)
	t.Cleanup(srv.Close)
	return c, srv
}

// traceCount is how many stored traces ls --json lists with these filters.
func (c *cli) traceCount(filters ...string) int {
	c.t.Helper()
	out, _, _ := c.run("", append([]string{"ls", "--json"}, filters...)...)
	var list []store.Summary
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) == 0 {
		c.t.Fatalf("ls %v: %v %q", filters, err, out)
	}
	return len(list)
}

func validReply(c judgetest.Call) judgetest.Reply {
	return judgetest.Reply{Content: judgetest.ValidAnswer(c.User()), InputTokens: 2000, OutputTokens: 300}
}

func TestJudgeExamplesThenShowAnalyzeEval(t *testing.T) {
	c, srv := judgeCLI(t, validReply)
	out, errOut, code := c.run("", "judge", "--model", "fake-model", "--base-url", srv.URL(), "--json")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var res judgeJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err, out)
	}
	n := c.traceCount()
	if res.Source != "judge:fake-model" || res.Selected != n || res.Progress.Done != n || res.Progress.Calls != n || res.Format != judge.FormatSchema || len(res.Failures) != 0 {
		t.Errorf("result %+v", res)
	}
	if !strings.Contains(errOut, fmt.Sprintf("judge: %d/%d traces, %d calls, %d,000 in + ", n, n, n, 2*n)) || !strings.Contains(errOut, " out tokens, cost unknown (no price for this model)") {
		t.Errorf("progress line: %q", errOut)
	}

	// show, analyze and eval read the judge's findings from the store.
	ls, _, _ := c.run("", "ls", "--json", "--model", "sim-beta")
	var list []store.Summary
	json.Unmarshal([]byte(ls), &list)
	shown, _, _ := c.run("", "show", "--json", "--source", "judge", list[0].ID)
	var doc showJSON
	if err := json.Unmarshal([]byte(shown), &doc); err != nil {
		t.Fatal(err)
	}
	present, absent := 0, 0
	for _, f := range doc.Findings {
		switch {
		case f.Source != "judge:fake-model":
			t.Errorf("show --source judge printed a finding of %s", f.Source)
		case f.Verdict == "present":
			present++
			if f.Mode != "FM-1.3" || f.Quote == "" || len(f.Steps) == 0 {
				t.Errorf("present finding %+v", f)
			}
		case f.Verdict == "absent":
			absent++
		}
	}
	if present != 1 || absent != 13 {
		t.Errorf("show: %d present, %d absent findings", present, absent)
	}
	if len(doc.Judgements) != 1 || doc.Judgements[0].Status != judge.StatusOK || doc.Judgements[0].Source != "judge:fake-model" {
		t.Errorf("show --json judgements = %+v", doc.Judgements)
	}
	if text, _, _ := c.run("", "show", list[0].ID); !strings.Contains(text, "judge     judge:fake-model: ok") {
		t.Errorf("show does not print the judge's record:\n%s", text)
	}
	summary, errOut, code := c.run("", "analyze", "--json", "--source", "judge:fake-model")
	var an struct {
		Report struct {
			All struct {
				Modes []struct {
					Mode string
					All  struct{ K int }
				} `json:"modes"`
			} `json:"all"`
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(summary), &an); code != exitOK || err != nil || len(an.Report.All.Modes) != 1 || an.Report.All.Modes[0].Mode != "FM-1.3" || an.Report.All.Modes[0].All.K != n {
		t.Errorf("analyze: exit %d %s\n%s", code, errOut, summary)
	}
	agreement, errOut, code := c.run("", "eval", "--labels", "detector", "--source", "judge:fake-model", "--bootstrap", "0")
	if code != exitOK || !strings.Contains(agreement, "FM-1.3") {
		t.Errorf("eval: exit %d %s\n%s", code, errOut, agreement)
	}

	// An immediate second run makes no call.
	srv.Reset()
	out, errOut, code = c.run("", "judge", "--model", "fake-model", "--base-url", srv.URL())
	if code != exitOK || len(srv.Calls()) != 0 || !strings.Contains(out, "judged 0 traces with fake-model (source judge:fake-model, prompt "+res.PromptVersion+")") || !strings.Contains(out, fmt.Sprintf("0 ok, 0 failed, %d already judged", n)) {
		t.Errorf("second run: exit %d, %d calls\n%s%s", code, len(srv.Calls()), out, errOut)
	}
	// --force judges them all again, from the answers cached by prompt.
	out, errOut, code = c.run("", "judge", "--model", "fake-model", "--base-url", srv.URL(), "--force")
	if code != exitOK || len(srv.Calls()) != 0 || !strings.Contains(out, fmt.Sprintf("judged %d traces with fake-model", n)) || !strings.Contains(out, fmt.Sprintf("%d ok, 0 failed, 0 already judged", n)) {
		t.Errorf("a forced run: exit %d, %d calls\n%s%s", code, len(srv.Calls()), out, errOut)
	}
}

// The API key is sent to the endpoint and nowhere else: not on stdout or
// stderr (debug logging on), not in the database, not in a dry run, even
// when the endpoint echoes it back in an error.
func TestJudgeNeverLeaksTheKey(t *testing.T) {
	const secret = "sk-do-not-leak-4f9a1c"
	n := 0
	c, srv := judgeCLI(t, func(call judgetest.Call) judgetest.Reply {
		n++
		switch n % 3 {
		case 0:
			return judgetest.Reply{Status: 400, Body: `{"error":{"message":"invalid request from ` + call.Auth + `"}}`}
		case 1:
			return judgetest.Reply{Content: "not JSON, and your key is " + call.Auth}
		}
		return validReply(call)
	})
	t.Setenv("FAULTLINE_API_KEY", secret)
	out, errOut, code := c.run("", "-v", "judge", "--model", "fake-model", "--base-url", srv.URL(), "--concurrency", "1")
	if code != exitDataError {
		t.Errorf("exit %d, want %d (some traces failed)\n%s", code, exitDataError, errOut)
	}
	if srv.Calls()[0].Auth != "Bearer "+secret {
		t.Errorf("the endpoint got Authorization %q", srv.Calls()[0].Auth)
	}
	dry, dryErr, _ := c.run("", "-v", "judge", "--dry-run", "--model", "fake-model")
	files, _ := filepath.Glob(c.db + "*")
	var stored []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, b...)
	}
	for name, text := range map[string]string{"stdout": out, "stderr": errOut, "dry-run output": dry + dryErr, "database": string(stored)} {
		if strings.Contains(text, secret) || strings.Contains(text, "4f9a1c") {
			t.Errorf("the key appears in the %s", name)
		}
	}
	if !strings.Contains(errOut, "[redacted]") {
		t.Errorf("the echoed key should show as [redacted]:\n%s", errOut)
	}
}

func TestJudgeConfigFileAndFlags(t *testing.T) {
	c, srv := judgeCLI(t, validReply)
	t.Setenv("MY_JUDGE_KEY", "sk-from-my-variable")
	cfg := filepath.Join(t.TempDir(), "faultline.yaml")
	os.WriteFile(cfg, []byte(`
other_command: {anything: 1}
judge:
  model: model-from-config
  base_url: `+srv.URL()+`
  api_key_env: MY_JUDGE_KEY
  concurrency: 3
  response_format: json_object
  temperature: 0.3
  models:
    model-from-config:
      context: 64000
      price: {input: 1.5, output: 6}
`), 0o644)
	out, errOut, code := c.run("", "judge", "--config", cfg, "--where", "model=sim-alpha", "--json")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	calls := srv.Calls()
	if len(calls) != c.traceCount("--model", "sim-alpha") || calls[0].Model != "model-from-config" || calls[0].Auth != "Bearer sk-from-my-variable" || calls[0].FormatType() != "json_object" || *calls[0].Temperature != 0.3 {
		t.Errorf("%d calls, first %+v", len(calls), calls[0])
	}
	var res judgeJSON
	json.Unmarshal([]byte(out), &res)
	// Calls of 2,000 input and 300 output tokens at $1.5 and $6 per million.
	want := float64(len(calls)) * (2000*1.5 + 300*6) / 1e6
	if res.Progress.Cost == nil || *res.Progress.Cost < want-1e-9 || *res.Progress.Cost > want+1e-9 || !strings.Contains(errOut, fmt.Sprintf("$%.2f", want)) {
		t.Errorf("cost %v, progress %q", res.Progress.Cost, errOut)
	}
	// Flags win over the file.
	srv.Reset()
	if _, errOut, code := c.run("", "judge", "--config", cfg, "--model", "flag-model", "--temperature", "-1", "--where", "model=sim-gamma,limit=1"); code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	if calls := srv.Calls(); len(calls) != 1 || calls[0].Model != "flag-model" || calls[0].Temperature != nil {
		t.Errorf("calls %+v", calls)
	}
	// A typo in the judge section is an error, not a silent default.
	os.WriteFile(cfg, []byte("judge:\n  modle: x\n"), 0o644)
	if _, errOut, code := c.run("", "judge", "--config", cfg); code != exitFailure || !strings.Contains(errOut, "field modle not found") {
		t.Errorf("typo: exit %d %s", code, errOut)
	}
}

func TestJudgeUsageErrors(t *testing.T) {
	c, srv := judgeCLI(t, validReply)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"judge"}, "no model: give --model"},
		{[]string{"judge", "--model", "m", "--where", "colour=red"}, `--where: unknown key "colour"`},
		{[]string{"judge", "--model", "m", "--where", "outcome=maybe"}, "--where: outcome must be one of success, failure, unknown"},
		{[]string{"judge", "--model", "m", "--where", "model"}, `--where: "model" is not key=value`},
		{[]string{"judge", "--model", "m", "--where", "model=a", "019c"}, "give trace ids or --where, not both"},
		{[]string{"judge", "--model", "m", "--response-format", "xml"}, "response format must be json_schema, json_object or none"},
		{[]string{"judge", "--model", "m", "nope"}, `trace "nope": not found`},
	}
	for _, tt := range tests {
		_, errOut, code := c.run("", tt.args...)
		if code != exitFailure || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, code, errOut, tt.want)
		}
	}
	if len(srv.Calls()) != 0 {
		t.Errorf("usage errors made %d calls", len(srv.Calls()))
	}
}

func TestJudgeFailureIsRecordedAndRetriedNextRun(t *testing.T) {
	var mu sync.Mutex
	broken := ""
	c, srv := judgeCLI(t, func(call judgetest.Call) judgetest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if broken == "" {
			broken = call.User()
		}
		if call.User() == broken {
			return judgetest.Reply{Content: strings.Replace(judgetest.ValidAnswer(call.User()), `"FM-1.4"`, `"FM 1.4?"`, 1)}
		}
		return validReply(call)
	})
	out, errOut, code := c.run("", "judge", "--model", "fake-model", "--base-url", srv.URL(), "--where", "model=sim-gamma", "--json")
	if code != exitDataError {
		t.Fatalf("exit %d, want %d\n%s", code, exitDataError, errOut)
	}
	var res judgeJSON
	json.Unmarshal([]byte(out), &res)
	if res.Progress.Failed != 1 || len(res.Failures) != 1 || !strings.Contains(res.Failures[0].Error, "FM-1.4 is missing") {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(errOut, "error: trace "+res.Failures[0].Trace+": answer rejected after a corrective retry: ") || !strings.Contains(errOut, "1 failed") {
		t.Errorf("stderr:\n%s", errOut)
	}
	st, err := sqlite.Open(context.Background(), c.db)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := st.JudgeRecords(context.Background(), "judge:fake-model", []string{res.Failures[0].Trace})
	st.Close()
	if rec := recs[res.Failures[0].Trace]; err != nil || rec.Status != judge.StatusFailed || rec.Calls != 2 || !strings.Contains(rec.Error, "FM-1.4 is missing") {
		t.Errorf("stored record %+v, %v", rec, err)
	}
	srv.Reset()
	_, _, code = c.run("", "judge", "--model", "fake-model", "--base-url", srv.URL(), "--where", "model=sim-gamma")
	if code != exitDataError || len(srv.Calls()) != 2 {
		t.Errorf("re-run: exit %d, %d calls (want the failed trace's 2)", code, len(srv.Calls()))
	}
}

// Killing a run (here: cancelling its context, as Ctrl-C does) loses no
// finished judgement, and the next run finishes the rest without asking
// again about a trace that was finished.
func TestJudgeKillAndResume(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, srv := judgeCLI(t, func(call judgetest.Call) judgetest.Reply {
		if call.N == 6 {
			cancel()
		}
		return validReply(call)
	})
	srv.Latency = 40 * time.Millisecond
	_, errOut, code := c.runCtx(ctx, "judge", "--model", "fake-model", "--base-url", srv.URL(), "--concurrency", "2")
	if code != exitFailure || !strings.Contains(errOut, "interrupted after") || !strings.Contains(errOut, "run the same command again to continue") {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	st, err := sqlite.Open(context.Background(), c.db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all, _ := st.List(context.Background(), store.Filter{})
	ids := make([]string, len(all))
	for i, s := range all {
		ids[i] = s.ID
	}
	recs, err := st.JudgeRecords(context.Background(), "judge:fake-model", ids)
	if err != nil || len(recs) == 0 || len(recs) >= len(ids) {
		t.Fatalf("%d of %d traces recorded before the kill (%v)", len(recs), len(ids), err)
	}
	// The prompts of the finished traces, as the command renders them.
	cfg := &judge.Config{Model: "fake-model"}
	zero := 0.0
	cfg.Temperature = &zero
	tok, _ := judge.NewTokenizer("")
	finished := map[string]bool{}
	for id, rec := range recs {
		if rec.Status != judge.StatusOK {
			t.Errorf("record %+v", rec)
		}
		tr, _ := st.Load(context.Background(), id)
		p, err := judge.NewPreview(tr, tok, judgeOptions(cfg))
		if err != nil {
			t.Fatal(err)
		}
		finished[p.Messages[1].Content] = true
	}
	srv.Reset()
	out, errOut, code := c.run("", "judge", "--model", "fake-model", "--base-url", srv.URL(), "--concurrency", "2")
	if code != exitOK || !strings.Contains(out, fmt.Sprintf("%d ok, 0 failed, %d already judged", len(ids)-len(recs), len(recs))) {
		t.Fatalf("resume: exit %d\n%s%s", code, out, errOut)
	}
	for _, call := range srv.Calls() {
		if finished[call.User()] {
			t.Errorf("the resumed run asked again about a trace finished before the kill")
		}
	}
	if got := len(srv.Calls()); got != len(ids)-len(recs) {
		t.Errorf("resumed run made %d calls for %d unfinished traces", got, len(ids)-len(recs))
	}
}

func TestJudgeDryRunCallsNothing(t *testing.T) {
	c, srv := judgeCLI(t, validReply)
	out, errOut, code := c.run("", "judge", "--dry-run", "--base-url", srv.URL(), "--where", "model=sim-beta,limit=1")
	if code != exitOK {
		t.Fatalf("exit %d %s", code, errOut)
	}
	for _, want := range []string{"=== system message (", "FM-3.3 Incorrect verification", "=== user message, window 1 of 1 (", "[S0 ", "DETECTOR HINTS", "=== estimate (o200k_base tokenizer)", "1 call(s) per trace"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q", want)
		}
	}
	if len(srv.Calls()) != 0 {
		t.Errorf("dry run made %d calls", len(srv.Calls()))
	}
}

func TestJudgeFatalEndpointError(t *testing.T) {
	c, srv := judgeCLI(t, func(judgetest.Call) judgetest.Reply {
		return judgetest.Reply{Status: 401, Body: `{"error":{"message":"Missing bearer token"}}`}
	})
	_, errOut, code := c.run("", "judge", "--model", "fake-model", "--base-url", srv.URL(), "--concurrency", "1")
	if code != exitFailure || !strings.Contains(errOut, "401 Unauthorized: Missing bearer token") || !strings.Contains(errOut, "no API key: set $FAULTLINE_API_KEY or $OPENAI_API_KEY") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	if len(srv.Calls()) != 1 {
		t.Errorf("%d calls after a 401", len(srv.Calls()))
	}
}

func TestJudgeFallsBackWhenResponseFormatIsRejected(t *testing.T) {
	c, srv := judgeCLI(t, func(call judgetest.Call) judgetest.Reply {
		if call.FormatType() == "json_schema" {
			return judgetest.Reply{Status: 400, Body: `{"error":{"message":"'response_format.type' json_schema is unavailable"}}`}
		}
		return judgetest.Reply{Content: "Sure! ```json\n" + judgetest.ValidAnswer(call.User()) + "\n```"}
	})
	out, errOut, code := c.run("", "judge", "--model", "fake-model", "--base-url", srv.URL(), "--where", "model=sim-alpha", "--json")
	var res judgeJSON
	json.Unmarshal([]byte(out), &res)
	n := c.traceCount("--model", "sim-alpha")
	if code != exitOK || res.Format != judge.FormatObject || res.Progress.Done != n {
		t.Errorf("exit %d, %+v\n%s", code, res, errOut)
	}
	schema := 0
	for _, call := range srv.Calls() {
		if call.FormatType() == "json_schema" {
			schema++
		}
	}
	if schema > defaultConcurrency || len(srv.Calls())-schema != n {
		t.Errorf("%d calls, %d with json_schema", len(srv.Calls()), schema)
	}
}

// silentRollout is a Codex session in which the model never answered: the
// request, a harness retry, and two turns with nothing in them.
const silentRollout = `{"timestamp":"2026-01-15T16:08:40.000Z","type":"session_meta","payload":{"id":"silent-run","timestamp":"2026-01-15T16:08:40.000Z","cwd":"/w","instructions":"Find the root cause. Write your diagnosis to: /w/agent_output.json"}}
{"timestamp":"2026-01-15T16:08:40.100Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Begin investigation"}]}}
{"timestamp":"2026-01-15T16:08:41.000Z","type":"turn_context","payload":{"model":"sim-silent","cwd":"/w"}}
{"timestamp":"2026-01-15T16:08:42.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"I don't see agent_output.json file. Please resume the investigation and make sure to create the agent_output.json file as instructed earlier."}]}}
{"timestamp":"2026-01-15T16:08:43.000Z","type":"turn_context","payload":{"model":"sim-silent","cwd":"/w"}}
`

// addSilentRun ingests a run whose model never answered, which the detectors
// find to be a system failure only, and returns its id.
func (c *cli) addSilentRun() string {
	c.t.Helper()
	path := filepath.Join(c.t.TempDir(), "silent.jsonl")
	if err := os.WriteFile(path, []byte(silentRollout), 0o644); err != nil {
		c.t.Fatal(err)
	}
	if _, errOut, code := c.run("", "ingest", "-q", path); code != exitOK {
		c.t.Fatalf("ingest: exit %d: %s", code, errOut)
	}
	return "silent-run"
}

// A trace whose detector findings are system failures only is not sent to
// the model: the dry run counts it, the run records it as skipped with the
// reason, and it reads nowhere as judged with every mode absent.
func TestJudgeSkipsSystemFailuresOnly(t *testing.T) {
	c, srv := judgeCLI(t, validReply)
	sysID := c.addSilentRun()
	n := c.traceCount()
	reason := "skipped: only system failures (SYS-1 Empty model response at S0-S1); no agent behaviour to judge"

	dry, errOut, code := c.run("", "judge", "--dry-run", "--model", "fake-model", "--base-url", srv.URL())
	if code != exitOK || len(srv.Calls()) != 0 {
		t.Fatalf("dry run: exit %d, %d calls\n%s", code, len(srv.Calls()), errOut)
	}
	for _, want := range []string{"=== user message, window 1 of 1 (", fmt.Sprintf("=== selection (%d traces;", n), fmt.Sprintf("%d would be judged: about ", n-1),
		"1 skipped as system failures only: about ", "  " + sysID + ": " + reason} {
		if !strings.Contains(dry, want) {
			t.Errorf("dry run lacks %q:\n%s", want, dry)
		}
	}

	out, errOut, code := c.run("", "judge", "--model", "fake-model", "--base-url", srv.URL(), "--json")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var res judgeJSON
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err, out)
	}
	if res.Progress.Done != n || res.Progress.SystemOnly != 1 || res.Progress.Calls != n-1 || len(srv.Calls()) != n-1 ||
		len(res.SystemOnly) != 1 || res.SystemOnly[0] != (judge.Skip{Trace: sysID, Reason: reason}) {
		t.Errorf("result %+v", res)
	}
	if !strings.Contains(errOut, "1 skipped (system failures only)") {
		t.Errorf("progress line: %q", errOut)
	}

	// show: the record says skipped and why; the judge left no finding.
	shown, _, _ := c.run("", "show", "--json", "--source", "judge", sysID)
	var doc showJSON
	if err := json.Unmarshal([]byte(shown), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Findings) != 0 || len(doc.Judgements) != 1 || doc.Judgements[0].Status != judge.StatusSkipped || doc.Judgements[0].Summary != reason {
		t.Errorf("show: findings %+v, judgements %+v", doc.Findings, doc.Judgements)
	}
	// analyze counts the skipped trace neither as annotated by the judge nor
	// as one without modes.
	summary, errOut, code := c.run("", "analyze", "--json", "--source", "judge:fake-model")
	var an struct {
		Report struct {
			All struct {
				Annotated []struct {
					Source string
					K      int
				} `json:"annotated"`
				Modes []struct {
					Mode string
					All  struct{ K, N int }
				} `json:"modes"`
			} `json:"all"`
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(summary), &an); code != exitOK || err != nil || len(an.Report.All.Annotated) != 1 || an.Report.All.Annotated[0].K != n-1 ||
		len(an.Report.All.Modes) != 1 || an.Report.All.Modes[0].All.K != n-1 {
		t.Errorf("analyze: exit %d %s\n%s", code, errOut, summary)
	}

	// The text summary counts it; --include-system-failures judges it.
	srv.Reset()
	out, errOut, code = c.run("", "judge", "--model", "fake-model", "--base-url", srv.URL())
	if code != exitOK || len(srv.Calls()) != 0 || !strings.Contains(out, fmt.Sprintf("judged 0 traces with fake-model (source judge:fake-model, prompt %s): 0 ok, 0 failed, %d already judged, 1 skipped as system failures only", res.PromptVersion, n-1)) {
		t.Errorf("second run: exit %d, %d calls\n%s%s", code, len(srv.Calls()), out, errOut)
	}
	out, errOut, code = c.run("", "judge", "--model", "fake-model", "--base-url", srv.URL(), "--include-system-failures")
	if code != exitOK || len(srv.Calls()) != 1 || !strings.Contains(out, "judged 1 traces") || !strings.Contains(out, "0 skipped as system failures only") {
		t.Errorf("--include-system-failures: exit %d, %d calls\n%s%s", code, len(srv.Calls()), out, errOut)
	}
	if help, _, _ := c.run("", "judge", "--help"); !strings.Contains(help, "--include-system-failures") || !strings.Contains(help, "recorded as skipped") {
		t.Errorf("--help does not document the skip:\n%s", help)
	}
}

// The judge's answer that a run is a system failure is stored as a finding
// of its SYS code from the judge's source, with no MAST verdict: analyze
// counts it among the system failures, not as a run without modes.
func TestJudgeSystemFailureAnswer(t *testing.T) {
	var sysPrompt string
	c, srv := judgeCLI(t, func(call judgetest.Call) judgetest.Reply {
		if call.User() != sysPrompt {
			return validReply(call)
		}
		step, quote := judgetest.Evidence(call.User())
		found := judgetest.Mode{Present: true, Confidence: 0.8, Steps: []string{step}, Quote: quote, Explanation: "The model returned nothing."}
		return judgetest.Reply{Content: judgetest.SystemFailureAnswer(judgetest.SystemFailure{Code: "SYS-1", Mode: found}, map[string]judgetest.Mode{"FM-1.5": found})}
	})
	ctx := context.Background()
	st, err := sqlite.Open(ctx, c.db)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := st.List(ctx, store.Filter{Model: []string{"sim-gamma"}, Limit: 1})
	sysID := list[0].ID
	tr, _ := st.Load(ctx, sysID)
	st.Close()
	zero := 0.0
	tok, _ := judge.NewTokenizer("")
	p, err := judge.NewPreview(tr, tok, judgeOptions(&judge.Config{Model: "fake-model", Temperature: &zero}))
	if err != nil {
		t.Fatal(err)
	}
	sysPrompt = p.Messages[1].Content
	n := c.traceCount()

	if _, errOut, code := c.run("", "judge", "--model", "fake-model", "--base-url", srv.URL()); code != exitOK || len(srv.Calls()) != n {
		t.Fatalf("exit %d, %d calls\n%s", code, len(srv.Calls()), errOut)
	}
	shown, _, _ := c.run("", "show", "--json", "--source", "judge", sysID)
	var doc showJSON
	if err := json.Unmarshal([]byte(shown), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Findings) != 1 || doc.Findings[0].Mode != "SYS-1" || doc.Findings[0].Verdict != "present" || doc.Findings[0].Source != "judge:fake-model" || doc.Findings[0].Quote == "" {
		t.Errorf("findings %+v", doc.Findings)
	}
	if len(doc.Judgements) != 1 || doc.Judgements[0].Status != judge.StatusOK ||
		!strings.HasSuffix(doc.Judgements[0].Summary, "[System failure (SYS-1) answered: no MAST verdict is kept. Dropped beside it: FM-1.5, marked present.]") {
		t.Errorf("judgements %+v", doc.Judgements)
	}
	summary, errOut, code := c.run("", "analyze", "--json", "--source", "judge:fake-model")
	var an struct {
		Report struct {
			All struct {
				Modes []struct {
					Mode string
					All  struct{ K int }
				} `json:"modes"`
				System struct {
					Traces int `json:"traces"`
				} `json:"system"`
			} `json:"all"`
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(summary), &an); code != exitOK || err != nil || len(an.Report.All.Modes) != 1 || an.Report.All.Modes[0].All.K != n-1 || an.Report.All.System.Traces != 1 {
		t.Errorf("analyze: exit %d %s\n%s", code, errOut, summary)
	}
}
