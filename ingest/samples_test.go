package ingest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
	"github.com/faultline/faultline/trace/toolcall"
)

// The samples under testdata/samples are small, made-up files in the shape
// of each format's real output (see testdata/samples/README.md). They are
// read here through ReadAll, as `faultline ingest` reads files, so that
// every format's decoding is tested on a clean clone, where the real data
// in ../shared is absent and the tests that need it skip. Nothing here
// skips.

// smpCase is one sample file or directory and what decoding it must give.
type smpCase struct {
	path    string // under testdata/samples
	format  string
	files   int // files decoded
	traces  int
	notices []string // substrings of the notices expected, one each
	check   func(t *testing.T, traces []*trace.Trace)
}

func TestSamples(t *testing.T) {
	for _, c := range smpCases {
		t.Run(c.path, func(t *testing.T) {
			traces := smpRead(t, c)
			c.check(t, traces)
		})
	}
}

// Every format has a sample: a format added without one fails here.
func TestSamplesCoverEveryFormat(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range smpCases {
		covered[c.format] = true
	}
	for _, f := range Formats {
		if !covered[f.Name()] {
			t.Errorf("format %s has no sample under testdata/samples", f.Name())
		}
	}
}

// The binary forms hold the same runs as their JSON counterparts and must
// decode to the same traces.
func TestSamplesBinaryMatchJSON(t *testing.T) {
	for _, pair := range [][2]string{
		{"inspect/log_forensics.json", "inspect/log_forensics.eval"},
		{"otlp/claims-triage.json", "otlp/claims-triage.binpb"},
	} {
		fromJSON := smpRead(t, smpCaseOf(t, pair[0]))
		fromBinary := smpRead(t, smpCaseOf(t, pair[1]))
		if got, want := smpComparable(t, fromBinary), smpComparable(t, fromJSON); got != want {
			t.Errorf("%s decodes differently from %s:\n%s\nwant\n%s", pair[1], pair[0], got, want)
		}
	}
}

var smpCases = []smpCase{
	{path: "codex", format: "codex", files: 1, traces: 1, check: checkSampleCodex},
	{path: "zero", format: "codex", files: 2, traces: 2, check: checkSampleZero},
	{path: "mad/mad-full.json", format: "mad", files: 1, traces: 2, check: checkSampleMADFull},
	{path: "mad/mad-ag2.json", format: "mad", files: 1, traces: 2, check: checkSampleMADAG2,
		notices: []string{`"3.1 Disagreement induced inaction" (a draft mode dropped from the final taxonomy)`}},
	{path: "whowhen/algorithm-generated.json", format: "whowhen", files: 1, traces: 1, check: checkSampleWhoWhenAG2},
	{path: "whowhen/hand-crafted.json", format: "whowhen", files: 1, traces: 1, check: checkSampleWhoWhenMagentic},
	{path: "taubench/results.json", format: "taubench", files: 1, traces: 2, check: checkSampleTau},
	{path: "magentic-one/log.json", format: "magentic-one", files: 1, traces: 1, check: checkSampleMagentic},
	{path: "inspect/log_forensics.json", format: "inspect", files: 1, traces: 2, check: checkSampleInspect},
	{path: "inspect/log_forensics.eval", format: "inspect", files: 1, traces: 2, check: checkSampleInspect},
	{path: "atif/trajectory.json", format: "atif", files: 1, traces: 2, check: checkSampleATIF,
		notices: []string{`tool call "finish" (id "toolu_04") has no result`}},
	{path: "docent/runs.json", format: "docent", files: 1, traces: 2, check: checkSampleDocent},
	{path: "openai-chat/conversations.jsonl", format: "openai-chat", files: 1, traces: 2, check: checkSampleOpenAI},
	{path: "otlp/claims-triage.json", format: "otlp-json", files: 1, traces: 1, check: checkSampleOTLP},
	{path: "otlp/claims-triage.binpb", format: "otlp-proto", files: 1, traces: 1, check: checkSampleOTLP},
}

func smpCaseOf(t *testing.T, path string) smpCase {
	t.Helper()
	for _, c := range smpCases {
		if c.path == path {
			return c
		}
	}
	t.Fatalf("no sample case for %s", path)
	return smpCase{}
}

// smpRead reads a sample as `faultline ingest` does and checks what every
// sample must give: no errors, the notices expected and no others, the
// files and traces counted, each trace in the format and valid.
func smpRead(t *testing.T, c smpCase) []*trace.Trace {
	t.Helper()
	path := filepath.Join("testdata", "samples", filepath.FromSlash(c.path))
	var issues []Issue
	traces, sum, err := ReadAll(context.Background(), []string{path}, Options{Report: func(i Issue) { issues = append(issues, i) }})
	if err != nil {
		t.Fatalf("ReadAll: %v", err)
	}
	var notices []string
	for _, i := range issues {
		if i.Severity == Error {
			t.Errorf("error: %s", i)
		} else {
			notices = append(notices, i.String())
		}
	}
	if len(notices) != len(c.notices) {
		t.Errorf("notices %q, want %d matching %q", notices, len(c.notices), c.notices)
	} else {
		for k, want := range c.notices {
			if !strings.Contains(notices[k], want) {
				t.Errorf("notice %q lacks %q", notices[k], want)
			}
		}
	}
	if sum.Files != c.files || sum.Traces != c.traces || len(traces) != c.traces {
		t.Fatalf("%d traces, summary %+v; want %d files and %d traces", len(traces), sum, c.files, c.traces)
	}
	for _, tr := range traces {
		if tr.Format != c.format {
			t.Errorf("trace %s read as %s, want %s", tr.ID, tr.Format, c.format)
		}
		if p := tr.Validate(); len(p) > 0 {
			t.Errorf("trace %s invalid: %v", tr.ID, p)
		}
		if tr.ID == "" || len(tr.Steps) == 0 {
			t.Errorf("trace %q has %d steps", tr.ID, len(tr.Steps))
		}
	}
	return traces
}

// smpByID indexes traces by id, failing on a missing one when asked.
func smpByID(t *testing.T, traces []*trace.Trace, ids ...string) map[string]*trace.Trace {
	t.Helper()
	m := map[string]*trace.Trace{}
	for _, tr := range traces {
		m[tr.ID] = tr
	}
	for _, id := range ids {
		if m[id] == nil {
			got := make([]string, 0, len(traces))
			for _, tr := range traces {
				got = append(got, tr.ID)
			}
			t.Fatalf("no trace %s among %v", id, got)
		}
	}
	return m
}

// smpKinds lists the kinds of a trace's steps, space-separated.
func smpKinds(tr *trace.Trace) string {
	kinds := make([]string, len(tr.Steps))
	for i, s := range tr.Steps {
		kinds[i] = string(s.Kind)
	}
	return strings.Join(kinds, " ")
}

func smpWantKinds(t *testing.T, tr *trace.Trace, want string) {
	t.Helper()
	if got := smpKinds(tr); got != strings.Join(strings.Fields(want), " ") {
		t.Errorf("trace %s steps:\n%s\nwant\n%s", tr.ID, got, want)
	}
}

// smpPaired checks that every tool call of a trace is paired with a result
// of the same call id and tool, but those named unpaired, and returns the
// calls by tool name (the last call of each name).
func smpPaired(t *testing.T, tr *trace.Trace, unpaired ...string) map[string]int {
	t.Helper()
	calls := map[string]int{}
	for i := range tr.Steps {
		s := &tr.Steps[i]
		if s.Kind != trace.KindToolCall {
			continue
		}
		calls[s.Tool] = i
		r := tr.Result(i)
		switch {
		case slices.Contains(unpaired, s.CallID):
			if r != nil {
				t.Errorf("trace %s: call %d (%s) is paired with step %d, want none", tr.ID, i, s.CallID, r.Index)
			}
		case r == nil:
			t.Errorf("trace %s: call %d (%s %s) has no result", tr.ID, i, s.Tool, s.CallID)
		case r.Kind != trace.KindToolResult || r.CallID != s.CallID || r.Tool != s.Tool || r.Index <= i:
			t.Errorf("trace %s: call %d (%s %s) paired with %+v", tr.ID, i, s.Tool, s.CallID, *r)
		}
	}
	return calls
}

// smpResult returns the result of the last call of tool.
func smpResult(t *testing.T, tr *trace.Trace, calls map[string]int, tool string) *trace.Step {
	t.Helper()
	i, ok := calls[tool]
	if !ok {
		t.Fatalf("trace %s: no call of %s", tr.ID, tool)
	}
	r := tr.Result(i)
	if r == nil {
		t.Fatalf("trace %s: call of %s has no result", tr.ID, tool)
	}
	return r
}

// smpAgents lists the distinct agents named on a trace's steps, in order.
func smpAgents(tr *trace.Trace) []string {
	var agents []string
	for _, s := range tr.Steps {
		if s.Agent != "" && !slices.Contains(agents, s.Agent) {
			agents = append(agents, s.Agent)
		}
	}
	return agents
}

func smpOutcome(t *testing.T, tr *trace.Trace, metric string, success bool) *trace.Outcome {
	t.Helper()
	o := trace.PrimaryOutcome(tr.Outcomes)
	if o == nil || o.Source != trace.FormatOutcomeSource || o.Metric != metric || *o.Success != success {
		t.Errorf("trace %s: outcome %+v, want %s from the format with success %v", tr.ID, o, metric, success)
		return &trace.Outcome{}
	}
	return o
}

func smpLast(tr *trace.Trace) *trace.Step { return tr.Step(len(tr.Steps) - 1) }

// smpComparable renders traces for comparison, without what says which
// file and format they came from.
func smpComparable(t *testing.T, traces []*trace.Trace) string {
	t.Helper()
	var b strings.Builder
	for _, tr := range traces {
		c := *tr
		c.Source, c.Format = "", ""
		j, err := json.Marshal(&c)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// codex: one Codex CLI session of an SRE agent that investigates, writes
// its diagnosis with a heredoc and validates it with jq.
func checkSampleCodex(t *testing.T, traces []*trace.Trace) {
	tr := traces[0]
	if tr.ID != "01957b3e-5a10-7c21-8e44-2f6a9d0c1b7e" || tr.System != "codex" || tr.Model != "gpt-oss-120b" ||
		!strings.HasPrefix(tr.Task, "**Task**") || !strings.Contains(tr.Task, "`teashop` namespace") {
		t.Errorf("id/system/model/task = %q/%q/%q/%q", tr.ID, tr.System, tr.Model, trace.Clip(tr.Task, 60))
	}
	if tr.Meta["cli_version"] != "0.80.0" || tr.Meta["originator"] != "codex_exec" || tr.Meta["turns"] != "7" {
		t.Errorf("meta %v", tr.Meta)
	}
	// The user message and the two reasonings are logged twice (item and
	// event) and kept once; the harness's instructions and environment
	// are system steps.
	smpWantKinds(t, tr, `system system message reasoning
		tool_call tool_result tool_call tool_result tool_call tool_result tool_call tool_result
		reasoning tool_call tool_result tool_call tool_result final`)
	if s := tr.Steps[0]; s.Role != trace.RoleHarness || s.Type != "instructions" {
		t.Errorf("step 0 %+v", s)
	}
	if s := tr.Steps[2]; s.Role != trace.RoleUser || s.Text != "Begin investigation" {
		t.Errorf("step 2 %+v", s)
	}
	calls := smpPaired(t, tr)
	if r := smpResult(t, tr, calls, "mcp__incident_tools__alert_summary"); r.Type != "mcp" || !strings.Contains(r.Text, `"alertname":"KubePodCrashLooping"`) {
		t.Errorf("MCP result %+v", *r)
	}
	kubectl := tr.Result(10)
	if tr.Steps[10].Tool != "shell" || !strings.Contains(tr.Steps[10].Args, "kubectl") || kubectl == nil ||
		kubectl.ExitCode == nil || *kubectl.ExitCode != 127 || !kubectl.IsError || kubectl.Text != "bash: kubectl: command not found\n" {
		t.Errorf("kubectl call %+v, result %+v", tr.Steps[10], kubectl)
	}
	if r := tr.Result(4); r == nil || r.ExitCode == nil || *r.ExitCode != 0 || r.IsError || !strings.HasPrefix(r.Text, "alerts\n") {
		t.Errorf("ls result %+v", r)
	}
	// The heredoc writes agent_output.json, and jq prints the same JSON.
	f := toolcall.Final(tr, "agent_output.json")
	if !slices.Equal(f.Writes, []int{13}) || !f.Known || !f.Exists || f.At != 15 ||
		!toolcall.SameJSON(f.Content, `{"entities":[{"name":"teashop/Deployment/ledger-db","contributing_factor":true,
			"reasoning":"Memory limit lowered to 128Mi; the container is OOMKilled on every start.",
			"evidence":"7 OOMKilled events for ledger-db between 08:41 and 08:55."},
			{"name":"teashop/Service/checkout-api","contributing_factor":false,
			"reasoning":"Checkout calls ledger-db synchronously and fails while it restarts.",
			"evidence":"HTTP 503 rate on checkout-api rose from 0% to 38% at 08:42."}],
			"propagations":[{"source":"teashop/Deployment/ledger-db","target":"teashop/Service/checkout-api",
			"condition":"ledger-db crash-looping","effect":"checkout requests fail with 503"}]}`) {
		t.Errorf("agent_output.json as the run leaves it: %+v", f)
	}
	// Outside a run directory no answer file is attached.
	if tr.Diagnosis != nil || tr.Scenario != "" {
		t.Errorf("diagnosis %+v, scenario %q", tr.Diagnosis, tr.Scenario)
	}
	if last := smpLast(tr); !strings.Contains(last.Text, "ledger-db (OOMKilled") || last.Tokens != 45 {
		t.Errorf("final %+v", *last)
	}
	if tr.Usage != (trace.Usage{InputTokens: 7300, CachedInputTokens: 6912, OutputTokens: 561, ReasoningTokens: 150, TotalTokens: 7861}) {
		t.Errorf("usage %+v", tr.Usage)
	}
	if tr.Started.Format("15:04:05.000") != "09:12:30.114" || tr.Ended.Format("15:04:05.000") != "09:12:49.510" {
		t.Errorf("started %s ended %s", tr.Started, tr.Ended)
	}
}

// zero: a Zero run directory (scenario 14, trial 3) holding an
// investigation that wrote agent_output.json after a harness retry, and a
// remediation run that only read it.
func checkSampleZero(t *testing.T, traces []*trace.Trace) {
	const investigation, remediation = "01957c10-2b44-7e03-b1d2-6a0f3c9e5d21", "01957c17-0d8a-7f55-9c3e-11b4a7e2f0c9"
	m := smpByID(t, traces, investigation, remediation)
	for _, tr := range traces {
		if tr.System != "itbench-zero" || tr.Scenario != "14" || tr.Trial != "3" || tr.Model != "gemini-2.5-flash" {
			t.Errorf("trace %s: system/scenario/trial/model = %q/%q/%q/%q", tr.ID, tr.System, tr.Scenario, tr.Trial, tr.Model)
		}
		smpPaired(t, tr)
	}
	inv := m[investigation]
	answer, err := os.ReadFile(filepath.Join("testdata", "samples", "zero", "14", "3", "agent_output.json"))
	if err != nil {
		t.Fatal(err)
	}
	if d := inv.Diagnosis; d == nil || d.Body != string(answer) || !strings.HasSuffix(d.Source, filepath.Join("zero", "14", "3", "agent_output.json")) {
		t.Errorf("the investigation's diagnosis %+v", d)
	}
	smpWantKinds(t, inv, "system system message tool_call tool_result message message tool_call tool_result tool_call tool_result final")
	if s := inv.Steps[6]; s.Role != trace.RoleHarness || s.Type != trace.TypeRetryNudge || !strings.HasPrefix(s.Text, "I don't see agent_output.json") {
		t.Errorf("step 6 %+v", s)
	}
	if s := inv.Steps[5]; s.Kind != trace.KindMessage || s.Role != trace.RoleAssistant {
		t.Errorf("the answer the harness re-prompted after is %+v, not a plain message", s)
	}
	if inv.Meta["harness_retries"] != "1" {
		t.Errorf("meta %v", inv.Meta)
	}
	// The remediation run printed the diagnosis but did not write it.
	rem := m[remediation]
	if rem.Diagnosis != nil {
		t.Errorf("the remediation run was given the diagnosis: %+v", rem.Diagnosis)
	}
	if !strings.HasPrefix(rem.Task, "**Task**: Generate Remediation Plan") {
		t.Errorf("remediation task %q", trace.Clip(rem.Task, 60))
	}
	if f := toolcall.Final(rem, "agent_output.json"); len(f.Writes) != 0 || !slices.Equal(f.Reads, []int{3}) {
		t.Errorf("the remediation run's view of agent_output.json: %+v", f)
	}
}

// mad-full: two records of the full MAD dataset (Magentic-One on GAIA,
// MetaGPT on ProgramDev), labelled by the LLM judge, one cell NaN.
func checkSampleMADFull(t *testing.T, traces []*trace.Trace) {
	m := smpByID(t, traces, "mad:Magentic-One:4101", "mad:MetaGPT:4102")
	mg := m["mad:Magentic-One:4101"]
	if mg.System != "Magentic-One" || mg.Model != "gpt-4o" || mg.Meta["benchmark"] != "GAIA" || mg.Meta["framework"] != "magentic-one" ||
		mg.Meta["mad_key"] != "gaia_val_lighthouses" || mg.Meta["mad_index"] != "12" ||
		!strings.HasPrefix(mg.Task, "How many lighthouses on the Lindqvist coast") {
		t.Errorf("Magentic-One record: %+v", mg)
	}
	smpWantKinds(t, mg, "system system message message message message message message final system system")
	if got := smpAgents(mg); !slices.Equal(got, []string{"MagenticOneOrchestrator", "WebSurfer", "Assistant"}) {
		t.Errorf("agents %v", got)
	}
	if s := mg.Steps[8]; s.Agent != "MagenticOneOrchestrator" || s.Text != "FINAL ANSWER: 5" {
		t.Errorf("final %+v", s)
	}
	smpMADJudge(t, mg, "FM-2.6", "FM-3.2")

	mp := m["mad:MetaGPT:4102"]
	if mp.Model != "gpt-4o-mini" || mp.Meta["framework"] != "metagpt" || mp.Task != "write a function that converts Roman numerals to integers" {
		t.Errorf("MetaGPT record: %+v", mp)
	}
	smpWantKinds(t, mp, "message message message message")
	want := [][2]string{{"Alice", "SimpleCoder"}, {"Bob", "SimpleTester"}, {"Carol", "SimpleReviewer"}, {"Bob", "SimpleTester"}}
	for i, w := range want {
		if s := mp.Steps[i]; s.Agent != w[0] || s.Role != w[1] {
			t.Errorf("MetaGPT step %d: agent %q role %q, want %v", i, s.Agent, s.Role, w)
		}
	}
	if !strings.Contains(mp.Steps[2].Text, "subtractive pairs") {
		t.Errorf("reviewer's step %q", mp.Steps[2].Text)
	}
	smpMADJudge(t, mp, "FM-1.3", "FM-2.5", "FM-3.2")
}

// smpMADJudge checks the judge's labels of a full-dataset record: one
// finding a mode, present for those given, absent for the others, none for
// a NaN cell.
func smpMADJudge(t *testing.T, tr *trace.Trace, present ...string) {
	t.Helper()
	var got []string
	for _, f := range tr.Findings {
		if f.Source != "mad:llm" || f.Taxonomy == "" || !strings.HasPrefix(f.Mode, "FM-") {
			t.Errorf("trace %s: finding %+v", tr.ID, f)
		}
		if f.Verdict == trace.Present {
			got = append(got, f.Mode)
		}
	}
	if !slices.Equal(got, present) {
		t.Errorf("trace %s: present %v, want %v", tr.ID, got, present)
	}
	nan := tr.ID == "mad:Magentic-One:4101" // its 3.3 is NaN: unanswered
	if want := 14 - btoi(nan); len(tr.Findings) != want {
		t.Errorf("trace %s: %d findings, want %d", tr.ID, len(tr.Findings), want)
	}
	if nan && slices.ContainsFunc(tr.Findings, func(f trace.Finding) bool { return f.Mode == "FM-3.3" }) {
		t.Errorf("trace %s: a NaN label became a finding", tr.ID)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// mad-ag2: AG2 group chats in the MAD envelope: a record of the
// human-labelled file (three annotators, NaN cells, labels of a draft
// taxonomy) and a bare one.
func checkSampleMADAG2(t *testing.T, traces []*trace.Trace) {
	m := smpByID(t, traces, "mad:AG2:57", "mad:AG2:list-chunker")
	h := m["mad:AG2:57"]
	if h.System != "AG2" || h.Meta["round"] != "Round 2" || h.Meta["benchmark"] != "GSM-Plus" || h.Meta["framework"] != "ag2" ||
		h.Meta["instance_id"] != "7c1e9a52-33d0-5b8e-a1f4-0d9b6e2c4a17" || !strings.HasPrefix(h.Task, "A baker fills 14 trays") {
		t.Errorf("human-labelled record: %+v", h)
	}
	smpWantKinds(t, h, "message message message message")
	for i, s := range h.Steps {
		// AG2 logs roles as the chat manager saw them: only the speaker is kept.
		if want := []string{"mathproxyagent", "assistant"}[i%2]; s.Agent != want || s.Role != "" {
			t.Errorf("step %d: agent %q role %q, want agent %q", i, s.Agent, s.Role, want)
		}
	}
	if !strings.Contains(h.Steps[0].Text, "Problem:\nA baker") || h.Steps[3].Text != `She sells \boxed{229} rolls.` {
		t.Errorf("texts %q / %q", h.Steps[0].Text, h.Steps[3].Text)
	}
	got := map[string]trace.Verdict{}
	for _, f := range h.Findings {
		got[f.Source+" "+f.Mode+" "+f.RawLabel] = f.Verdict
	}
	want := map[string]trace.Verdict{
		"mad:annotator_1 FM-1.1 1.1 Poor task constraint compliance": trace.Absent,
		"mad:annotator_2 FM-1.1 1.1 Poor task constraint compliance": trace.Present,
		"mad:annotator_1 FM-1.3 2.2 Step repetition":                 trace.Absent,
		"mad:annotator_2 FM-1.3 2.2 Step repetition":                 trace.Absent,
		"mad:annotator_3 FM-1.3 2.2 Step repetition":                 trace.Absent,
		"mad:annotator_1  3.1 Disagreement induced inaction":         trace.Absent,
		"mad:annotator_2  3.1 Disagreement induced inaction":         trace.Absent,
		"mad:annotator_1 FM-3.3 4.2 Lack of result verification":     trace.Present,
		"mad:annotator_2 FM-3.3 4.2 Lack of result verification":     trace.Absent,
	}
	if len(got) != len(want) {
		t.Errorf("findings %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("finding %q: %q, want %q", k, got[k], v)
		}
	}

	d := m["mad:AG2:list-chunker"]
	if d.Meta["round"] != "dogfood-2026-02-10" || d.Meta["benchmark"] != "dogfood-v2" || len(d.Findings) != 0 || !strings.HasPrefix(d.Task, "Write a Python function `chunk(xs, n)`") {
		t.Errorf("AG2 record: %+v", d)
	}
	var speakers []string
	for _, s := range d.Steps {
		speakers = append(speakers, s.Agent)
	}
	if !slices.Equal(speakers, []string{"Planner", "Coder", "Tester", "Planner"}) {
		t.Errorf("speakers %v", speakers)
	}
}

// whowhen: an algorithm-generated record (an AG2 group chat with system
// prompts and a code executor) with its decisive error.
func checkSampleWhoWhenAG2(t *testing.T, traces []*trace.Trace) {
	tr := traces[0]
	if tr.ID != "whowhen:algorithm-generated:a83f0c2e-6d1b-4e57-9b2a-5c7d18e4f903" || tr.System != "ag2" ||
		!strings.HasPrefix(tr.Task, "The attached file lists the bus stops") || tr.Meta["ground_truth"] != "34" || tr.Meta["level"] != "1" {
		t.Errorf("trace %+v", tr)
	}
	smpWantKinds(t, tr, "system system message tool_result message message tool_result message")
	for i, agent := range []string{"DataAnalysis_Expert", "Verification_Expert"} {
		if s := tr.Steps[i]; s.Type != "instructions" || s.Agent != agent {
			t.Errorf("system prompt %d: %+v", i, s)
		}
	}
	ok, failed := tr.Steps[3], tr.Steps[6]
	if ok.Agent != "Computer_terminal" || ok.ExitCode == nil || *ok.ExitCode != 0 || ok.IsError {
		t.Errorf("code execution %+v", ok)
	}
	if failed.ExitCode == nil || *failed.ExitCode != 1 || !failed.IsError || !strings.Contains(failed.Text, "KeyError: 'cumulative'") {
		t.Errorf("failed code execution %+v", failed)
	}
	smpOutcome(t, tr, "is_correct", false)
	// mistake_step 2 is the third history entry, after the two system prompts.
	smpDecisive(t, tr, 4, "DataAnalysis_Expert", "summed the minutes of the whole line")
	if !strings.Contains(tr.Steps[4].Text, "51 minutes") {
		t.Errorf("the decisive step %q", tr.Steps[4].Text)
	}
}

func smpDecisive(t *testing.T, tr *trace.Trace, step int, agent, reason string) {
	t.Helper()
	if len(tr.Findings) != 1 {
		t.Fatalf("findings %+v", tr.Findings)
	}
	f := tr.Findings[0]
	if f.Source != WhoWhenSource || f.RawLabel != DecisiveError || f.Mode != "" || f.Verdict != trace.Present ||
		!slices.Equal(f.Steps, []int{step}) || !strings.HasPrefix(f.Explanation, agent+": ") || !strings.Contains(f.Explanation, reason) {
		t.Errorf("decisive error %+v", f)
	}
	if s := tr.Step(step); s == nil || s.Agent != agent {
		t.Errorf("the decisive step is %+v, want one by %s", s, agent)
	}
	if tr.Meta[MetaMistakeAgent] != agent {
		t.Errorf("meta %v", tr.Meta)
	}
}

// whowhen: a hand-crafted record (a Magentic-One log) with its decisive
// error.
func checkSampleWhoWhenMagentic(t *testing.T, traces []*trace.Trace) {
	tr := traces[0]
	if tr.System != "magentic-one" || tr.Meta["subset"] != "hand-crafted" || tr.Task != "Which café within 300 m of Elm Square in Tarnby is open on Mondays after 8 pm?" {
		t.Errorf("trace %+v", tr)
	}
	smpWantKinds(t, tr, "message reasoning message message reasoning message message reasoning final")
	if s := tr.Steps[5]; s.Agent != "Orchestrator" || s.Type != "-> WebSurfer" {
		t.Errorf("instruction to WebSurfer %+v", s)
	}
	if s := smpLast(tr); s.Agent != "Orchestrator" || !strings.Contains(s.Text, "FINAL ANSWER: Night Owl Coffee") {
		t.Errorf("final %+v", s)
	}
	if o := smpOutcome(t, tr, "is_correct", false); o.Detail != "ground truth: Blue Fern" {
		t.Errorf("outcome detail %q", o.Detail)
	}
	smpDecisive(t, tr, 6, "WebSurfer", "900 m away")
}

// taubench: a results file of two runs, a failed retail one and a passed
// airline one.
func checkSampleTau(t *testing.T, traces []*trace.Trace) {
	var retail, airline *trace.Trace
	for _, tr := range traces {
		switch tr.Scenario {
		case "retail:52":
			retail = tr
		case "airline:8":
			airline = tr
		}
	}
	if retail == nil || airline == nil {
		t.Fatalf("scenarios %q, %q", traces[0].Scenario, traces[1].Scenario)
	}
	if retail.Trial != "0" || retail.System != "tau-bench" || !strings.HasPrefix(retail.Task, "You are Ines Varga, zip 60412.") ||
		retail.Meta["domain"] != "retail" || retail.Meta["expected_actions"] != "find_user_id_by_name_zip, get_order_details, cancel_pending_order" {
		t.Errorf("retail run %+v", retail)
	}
	smpWantKinds(t, retail, "system message message message tool_call tool_result tool_call tool_result final message")
	if s := retail.Steps[0]; s.Type != "instructions" || !strings.HasPrefix(s.Text, "# Retail agent policy") {
		t.Errorf("policy %+v", s)
	}
	calls := smpPaired(t, retail)
	if r := smpResult(t, retail, calls, "find_user_id_by_email"); r.Text != "Error: user not found" {
		t.Errorf("lookup by email %+v", r)
	}
	if _, ok := calls["cancel_pending_order"]; ok {
		t.Error("the retail agent never cancelled the order in this run")
	}
	if o := smpOutcome(t, retail, "reward", false); o.Score == nil || *o.Score != 0 || o.Detail != "r_actions=0.0" {
		t.Errorf("retail outcome %+v", o)
	}

	if airline.Trial != "1" || airline.Meta["domain"] != "airline" || !strings.HasPrefix(airline.Task, "Your user id is tomas_okafor_2290.") {
		t.Errorf("airline run %+v", airline)
	}
	calls = smpPaired(t, airline)
	if r := smpResult(t, airline, calls, "update_reservation_baggages"); !strings.Contains(r.Text, `"total_baggages": 2`) {
		t.Errorf("update %+v", r)
	}
	if o := smpOutcome(t, airline, "reward", true); o.Score == nil || *o.Score != 1 {
		t.Errorf("airline outcome %+v", o)
	}
	if s := airline.Steps[8]; s.Kind != trace.KindFinal || !strings.HasPrefix(s.Text, "Done: reservation Q7WZ3K") {
		t.Errorf("final %+v", s)
	}
}

// magentic-one: a Magentic-One message log that ends with the answer.
func checkSampleMagentic(t *testing.T, traces []*trace.Trace) {
	tr := traces[0]
	if !strings.HasPrefix(tr.ID, "magentic-one:") || tr.System != "magentic-one" || !strings.HasPrefix(tr.Task, "What is the smallest prime number greater than") {
		t.Errorf("trace %+v", tr)
	}
	smpWantKinds(t, tr, "message reasoning reasoning message message reasoning message message reasoning final")
	if got := smpAgents(tr); !slices.Equal(got, []string{"Orchestrator", "WebSurfer", "Assistant"}) {
		t.Errorf("agents %v", got)
	}
	if s := tr.Steps[6]; s.Agent != "Orchestrator" || s.Type != "-> Assistant" || s.Role != trace.RoleAssistant {
		t.Errorf("instruction to Assistant %+v", s)
	}
	if s := smpLast(tr); s.Type != "termination condition" || !strings.Contains(s.Text, "FINAL ANSWER: 13") {
		t.Errorf("final %+v", s)
	}
}

// inspect: an Inspect log of two samples: one that used tools (one timing
// out) and passed, its system prompt an attachment; one stopped by its
// token limit.
func checkSampleInspect(t *testing.T, traces []*trace.Trace) {
	m := smpByID(t, traces, "inspect:Qm7vX2pLk9RtWc4nZb8yHd:lf-01:1", "inspect:Qm7vX2pLk9RtWc4nZb8yHd:lf-02:1")
	for _, tr := range traces {
		if tr.Model != "openai/gpt-4.1-mini" || tr.System != "system_message+use_tools+generate" || tr.Trial != "1" ||
			tr.Meta["task"] != "log_forensics" || tr.Meta["run_id"] != "Tj3sN6fGq1VwE5rKa0uLxo" || tr.Meta["status"] != "success" {
			t.Errorf("trace %s: %+v", tr.ID, tr)
		}
		if s := tr.Steps[0]; s.Kind != trace.KindSystem || s.Type != "instructions" || s.Text != "You are a careful log analyst. Answer with the exact value asked for, then stop." {
			t.Errorf("trace %s: system prompt %+v", tr.ID, s)
		}
	}
	one := m["inspect:Qm7vX2pLk9RtWc4nZb8yHd:lf-01:1"]
	if one.Scenario != "lf-01" || one.Task != "Which client IP made the most failed logins in /var/log/sample/auth.log?" || one.Meta["target"] != "10.20.30.44" {
		t.Errorf("sample lf-01: %+v", one)
	}
	smpWantKinds(t, one, "system message reasoning tool_call tool_result tool_call tool_result final")
	smpPaired(t, one)
	if r := one.Result(5); r == nil || !r.IsError || r.Text != "timeout: Command timed out before completing." {
		t.Errorf("the timed-out call's result %+v", r)
	}
	if r := one.Result(3); r == nil || r.IsError || !strings.Contains(r.Text, "41 10.20.30.44") {
		t.Errorf("the first call's result %+v", r)
	}
	if o := smpOutcome(t, one, "exact_match", true); o.Detail != "answer: 10.20.30.44" {
		t.Errorf("outcome %+v", o)
	}
	if one.Usage != (trace.Usage{InputTokens: 2210, CachedInputTokens: 1024, OutputTokens: 188, TotalTokens: 2398}) {
		t.Errorf("usage %+v", one.Usage)
	}
	// This sample gives no start and end: they come from its events.
	if one.Started.Format("15:04:05.00") != "09:30:01.12" || one.Ended.Format("15:04:05.00") != "09:30:41.90" {
		t.Errorf("started %s ended %s", one.Started, one.Ended)
	}

	two := m["inspect:Qm7vX2pLk9RtWc4nZb8yHd:lf-02:1"]
	smpWantKinds(t, two, "system message message tool_call tool_result error")
	smpPaired(t, two)
	if r := two.Result(3); r == nil || !strings.Contains(r.Text, "sudo:   tobias :") {
		t.Errorf("the attachment in the tool result is not resolved: %+v", r)
	}
	if s := smpLast(two); s.Type != "limit" || s.Text != "token limit reached (6000)" {
		t.Errorf("limit step %+v", s)
	}
	smpOutcome(t, two, "exact_match", false)
	if two.Started.Format("15:04:05.0") != "09:30:01.3" || two.Ended.Format("15:04:05.0") != "09:31:11.7" {
		t.Errorf("started %s ended %s", two.Started, two.Ended)
	}
}

// atif: an OpenHands-style trajectory (ATIF v1.7) that delegates to a
// sub-agent whose trajectory it embeds.
func checkSampleATIF(t *testing.T, traces []*trace.Trace) {
	const mainID, subID = "atif:6b1f0e2a-8c47-4d93-a5e1-2f7c9b30d864", "atif:6b1f0e2a-review-01"
	m := smpByID(t, traces, mainID, subID)
	tr := m[mainID]
	if tr.System != "openhands" || tr.Model != "anthropic/claude-sonnet-4" || tr.Meta["schema_version"] != "ATIF-v1.7" || tr.Meta["trajectory_id"] != "traj-main-6b1f0e2a" ||
		tr.Meta["cost_usd"] != "0.0368" || !strings.HasPrefix(tr.Task, "The test test_parse_duration") {
		t.Errorf("trajectory %+v", tr)
	}
	smpWantKinds(t, tr, `system message system reasoning message tool_call tool_result
		message tool_call tool_result message tool_call tool_result message tool_call`)
	if tr.Steps[0].Type != "instructions" || tr.Steps[2].Type != "" || tr.Steps[2].Text != "Added workspace context" {
		t.Errorf("system steps %+v / %+v", tr.Steps[0], tr.Steps[2])
	}
	calls := smpPaired(t, tr, "toolu_04")
	if r := smpResult(t, tr, calls, "execute_bash"); !strings.Contains(r.Text, "ValueError: invalid duration '1h30m'") {
		t.Errorf("test run %+v", r)
	}
	if r := smpResult(t, tr, calls, "delegate"); !strings.Contains(r.Text, "[subagent trajectory 6b1f0e2a-review-01]") {
		t.Errorf("delegation %+v", r)
	}
	if s := tr.Steps[calls["str_replace_editor"]]; !strings.Contains(s.Args, `"old_str":`) || s.Tokens != 120 {
		t.Errorf("edit call %+v", s)
	}
	if s := tr.Steps[3]; s.Text != "Run the failing test first to see the error." || s.Time.Format("15:04:05.0") != "11:00:06.5" {
		t.Errorf("reasoning %+v", s)
	}
	if tr.Usage != (trace.Usage{InputTokens: 10900, OutputTokens: 272, TotalTokens: 11172}) {
		t.Errorf("usage %+v", tr.Usage)
	}
	sub := m[subID]
	if sub.System != "openhands-reviewer" || sub.Model != "anthropic/claude-haiku-4" || sub.Meta["parent_session"] != mainID || sub.Meta["trajectory_id"] != "traj-review-01" {
		t.Errorf("sub-agent %+v", sub)
	}
	smpWantKinds(t, sub, "message final")
}

// docent: two agent runs: a tool-using transcript with scores, and a run of
// two transcripts (one agent each).
func checkSampleDocent(t *testing.T, traces []*trace.Trace) {
	m := smpByID(t, traces, "docent:1f7e2c90-4b5d-4e8a-9c31-0a6d8b2e5f47", "docent:9a3c5e71-2d8f-4b06-8e4a-6c1f0b9d2e35")
	w := m["docent:1f7e2c90-4b5d-4e8a-9c31-0a6d8b2e5f47"]
	if w.Model != "gpt-4.1" || w.Scenario != "wh-12" || w.Trial != "2" || w.Meta["scaffold"] != "react" ||
		w.Meta["name"] != "warehouse task 12" || w.Task != "Reserve 40 units of SKU BX-118 for order 7781." {
		t.Errorf("run %+v", w)
	}
	smpWantKinds(t, w, "system message reasoning message tool_call tool_result tool_call tool_result final")
	calls := smpPaired(t, w)
	if r := smpResult(t, w, calls, "reserve"); !r.IsError || !strings.Contains(r.Text, "insufficient stock: 25 available") {
		t.Errorf("failed reservation %+v", r)
	}
	if s := w.Steps[calls["reserve"]]; s.Args != `{"sku":"BX-118","qty":40,"order":"7781"}` {
		t.Errorf("reserve arguments %q", s.Args)
	}
	if o := smpOutcome(t, w, "reward", false); o.Detail != "reward=0.0 asked_before_partial=true" {
		t.Errorf("outcome %+v", o)
	}

	d := m["docent:9a3c5e71-2d8f-4b06-8e4a-6c1f0b9d2e35"]
	smpWantKinds(t, d, "message message message final")
	if d.Steps[1].Agent != "proponent" || d.Steps[3].Agent != "opponent" {
		t.Errorf("agents %v", smpAgents(d))
	}
	// judge_verdict is no score; winner_correct is the first that is.
	smpOutcome(t, d, "winner_correct", true)
}

// openai-chat: two {"messages"} conversations, one with a tool call, one
// refused.
func checkSampleOpenAI(t *testing.T, traces []*trace.Trace) {
	m := smpByID(t, traces, "chat:conv-ledger-1", "chat:conv-ledger-2")
	a := m["chat:conv-ledger-1"]
	if a.Model != "gpt-4o-mini" || a.Task != "What was the total of invoices sent to Pellworth Ltd in January?" {
		t.Errorf("conversation %+v", a)
	}
	smpWantKinds(t, a, "system message tool_call tool_result final")
	if s := a.Steps[0]; s.Role != "developer" || s.Type != "instructions" {
		t.Errorf("developer message %+v", s)
	}
	calls := smpPaired(t, a)
	if s := a.Steps[calls["query_invoices"]]; s.Args != `{"customer": "Pellworth Ltd", "month": "2026-01"}` {
		t.Errorf("arguments %q", s.Args)
	}
	if r := smpResult(t, a, calls, "query_invoices"); !strings.Contains(r.Text, "INV-211") {
		t.Errorf("result %+v", r)
	}
	b := m["chat:conv-ledger-2"]
	smpWantKinds(t, b, "system message final")
	if s := smpLast(b); s.Type != "refusal" || !strings.HasPrefix(s.Text, "I can't delete invoices") {
		t.Errorf("refusal %+v", s)
	}
}

// otlp: one OpenTelemetry trace of an agent (GenAI conventions): its
// invoke_agent span, three chat spans carrying the conversation, two tool
// spans (one failing) and an HTTP span that is no step.
func checkSampleOTLP(t *testing.T, traces []*trace.Trace) {
	tr := traces[0]
	if tr.ID != "7a3e91c04d2b58f6e1c0a9b83d4f2e61" || tr.System != "claims-assistant" || tr.Model != "gpt-4.1-mini-2025-04-14" ||
		tr.Task != "Claim CLM-5531 for water damage: is it covered under policy HP-2207?" {
		t.Errorf("trace %+v", tr)
	}
	for k, v := range map[string]string{"session_id": "conv-2291", "otel.conventions": "gen_ai", "otel.spans": "7",
		"gen_ai.provider": "openai", "otel.root_span_id": "a1b2c3d4e5f60718"} {
		if tr.Meta[k] != v {
			t.Errorf("meta %s = %q, want %q", k, tr.Meta[k], v)
		}
	}
	// Each chat span repeats the conversation so far: only what is new
	// becomes a step.
	smpWantKinds(t, tr, "message message message tool_call tool_result tool_call tool_result reasoning final")
	if got := smpAgents(tr); !slices.Equal(got, []string{"claims-triage"}) {
		t.Errorf("agents %v", got)
	}
	calls := smpPaired(t, tr)
	if r := smpResult(t, tr, calls, "lookup_policy"); r.IsError || r.SpanID != "c3d4e5f607182930" || !strings.Contains(r.Text, `"water_damage":"covered"`) {
		t.Errorf("policy lookup %+v", r)
	}
	if r := smpResult(t, tr, calls, "fetch_claim"); !r.IsError || r.SpanID != "f60718293a4b5c6d" || !strings.Contains(r.Text, "claims-db timeout after 5s") {
		t.Errorf("failed claim fetch %+v", r)
	}
	for _, s := range tr.Steps {
		if s.SpanID == "" || s.SpanID == "d4e5f60718293a4b" {
			t.Errorf("step %d from span %q", s.Index, s.SpanID)
		}
	}
	if s := tr.Steps[calls["lookup_policy"]]; s.Args != `{"policy":"HP-2207"}` || s.Tokens != 31 {
		t.Errorf("policy call %+v", s)
	}
	if s := smpLast(tr); !strings.Contains(s.Text, "queued for a manual check") || s.Tokens != 74 || s.SpanID != "0718293a4b5c6d7e" {
		t.Errorf("final %+v", s)
	}
	if tr.Usage != (trace.Usage{InputTokens: 1552, OutputTokens: 127, TotalTokens: 1679}) {
		t.Errorf("usage %+v", tr.Usage)
	}
	if tr.Started.Format("15:04:05.0") != "08:00:00.0" || tr.Ended.Format("15:04:05.0") != "08:00:09.5" {
		t.Errorf("started %s ended %s", tr.Started, tr.Ended)
	}
	if len(tr.Outcomes) != 0 {
		t.Errorf("outcomes %+v: the root span did not fail", tr.Outcomes)
	}
}
