package web

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

func TestFormatArgs(t *testing.T) {
	tests := []struct {
		name, tool, args string
		want             callArgs
	}{
		{"a shell argv", "shell", `{"command":["bash","-lc","ls -R /data"],"workdir":"/srv","timeout_ms":10000}`,
			callArgs{Text: "ls -R /data", Shell: true, Rest: []argField{{"timeout_ms", "10000"}, {"workdir", "/srv"}}}},
		{"an argv of any tool", "run", `{"command":["ls","-l"]}`, callArgs{Text: "ls -l", Shell: true}},
		{"a command string", "exec_command", `{"cmd": "kubectl get pods"}`, callArgs{Text: "kubectl get pods", Shell: true}},
		// An editor's "command" is no command line.
		{"an editor's command", "str_replace_editor", `{"command":"view","path":"/a.go"}`,
			callArgs{Text: "view", Rest: []argField{{"path", "/a.go"}}}},
		// A field too long to go beside the command: the whole call as JSON.
		{"an editor's file", "str_replace_editor", `{"command":"create","file_text":"a\nb"}`,
			callArgs{Text: "{\n  \"command\": \"create\",\n  \"file_text\": \"a\\nb\"\n}"}},
		{"a long field", "shell", `{"command":"cat","stdin":"` + strings.Repeat("x", restLimit+1) + `"}`,
			callArgs{Text: "{\n  \"command\": \"cat\",\n  \"stdin\": \"" + strings.Repeat("x", restLimit+1) + "\"\n}"}},
		// A patch is the call's text, but no command line.
		{"a patch", "apply_patch", `{"input":"*** Begin Patch\n*** End Patch"}`, callArgs{Text: "*** Begin Patch\n*** End Patch"}},
		{"JSON", "lookup", `{"policy":"HP-2207","limit":[1,2]}`, callArgs{Text: "{\n  \"policy\": \"HP-2207\",\n  \"limit\": [\n    1,\n    2\n  ]\n}"}},
		{"a JSON list", "lookup", ` [1, 2]`, callArgs{Text: "[\n  1,\n  2\n]"}},
		{"not JSON", "lookup", `{"open": `, callArgs{Text: `{"open": `}},
		{"plain text", "sql", `SELECT 1`, callArgs{Text: `SELECT 1`}},
	}
	for _, tc := range tests {
		if got := formatArgs(tc.tool, tc.args); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %#v, want %#v", tc.name, got, tc.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	findings := []trace.Finding{
		{Mode: "FM-1.3", Source: "detector", Verdict: trace.Present, Steps: []int{9, 4}},
		{Mode: "FM-1.3", Source: "human:a", Verdict: trace.Absent},
		{Mode: "FM-1.3", Source: "judge:m", Verdict: trace.Present, Steps: []int{4, 2}},
		{Mode: "FM-2.6", Source: "human:a", Verdict: trace.Absent},
		{Mode: "FM-3.3", Source: "human:a", Verdict: trace.Unsure},
		{Mode: "FM-3.3", Source: "judge:m", Verdict: trace.Absent},
	}
	got := summarize(newMatrix(findings, true))
	want := findingsSummary{
		Present: []summaryRow{{Code: "FM-1.3", Title: "FM-1.3 Step repetition", Steps: []int{2, 4, 9},
			Sources: []sourceVerdict{{"detector", "present"}, {"human:a", "absent"}, {"judge:m", "present"}}}},
		Other: []summaryRow{
			{Code: "FM-2.6", Title: "FM-2.6 Reasoning-action mismatch", Sources: []sourceVerdict{{"human:a", "absent"}}},
			{Code: "FM-3.3", Title: "FM-3.3 Incorrect verification", Sources: []sourceVerdict{{"human:a", "unsure"}, {"judge:m", "absent"}}},
		},
		Absent: 2, Unsure: 1,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// bars is a waterfall's rows in brief: indentation, label, steps, time
// taken, tokens, and an x for a failure.
func bars(w *waterfall) []string {
	var out []string
	for _, r := range w.Rows {
		line := fmt.Sprintf("%s%s %v %s", strings.Repeat(". ", r.Depth), r.Label, r.Steps, r.Took)
		if r.Agent != "" {
			line += " @" + r.Agent
		}
		if r.Tokens > 0 {
			line += fmt.Sprintf(" %dtok", r.Tokens)
		}
		if r.Error {
			line += " x"
		}
		for _, f := range r.Found {
			line += " !" + f
		}
		out = append(out, line)
	}
	return out
}

func TestWaterfall(t *testing.T) {
	at := func(ms int) time.Time {
		return time.Date(2026, 2, 20, 8, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
	}
	pair := func(i int) *int { return &i }
	exit1 := 1
	// The claims-triage sample as ingest/otel writes it: the root agent's
	// task, an LLM span (system prompt in, a call out), the tool span's
	// result, a second LLM span and a failed tool, the last LLM's answer.
	otel := []trace.Step{
		{Kind: trace.KindMessage, Role: "user", SpanID: "a1", Agent: "triage", Time: at(0)},
		{Kind: trace.KindMessage, Role: "system", SpanID: "b2", Agent: "triage", Time: at(200)},
		{Kind: trace.KindMessage, Role: "assistant", SpanID: "b2", Agent: "triage", Time: at(1900)},
		{Kind: trace.KindToolCall, Role: "assistant", SpanID: "b2", Agent: "triage", Time: at(1900), Tokens: 31, Tool: "lookup_policy", Pair: pair(4)},
		{Kind: trace.KindToolResult, Role: "tool", SpanID: "c3", Agent: "triage", Time: at(2600), Tool: "lookup_policy", Pair: pair(3)},
		{Kind: trace.KindToolCall, Role: "assistant", SpanID: "e5", Agent: "triage", Time: at(3800), Tokens: 22, Tool: "fetch_claim", Pair: pair(6)},
		{Kind: trace.KindToolResult, Role: "tool", SpanID: "f6", Agent: "triage", Time: at(8900), Tool: "fetch_claim", Pair: pair(5), IsError: true},
		{Kind: trace.KindFinal, Role: "assistant", SpanID: "07", Agent: "triage", Time: at(9400), Tokens: 74},
	}
	// A span enclosing another by its steps holds it, without a root.
	nested := []trace.Step{
		{Kind: trace.KindMessage, Role: "user", SpanID: "p", Time: at(0)},
		{Kind: trace.KindToolCall, Role: "assistant", SpanID: "c", Time: at(500), Tool: "t", Pair: pair(2)},
		{Kind: trace.KindToolResult, Role: "tool", SpanID: "c", Time: at(700), Tool: "t", Pair: pair(1)},
		{Kind: trace.KindFinal, Role: "assistant", SpanID: "p", Time: at(1000)},
		{Kind: trace.KindMessage, Role: "user", SpanID: "q", Time: at(1500)},
	}
	// A planner hands over to a coder: the coder's span gives its task.
	handoff := []trace.Step{
		{Kind: trace.KindMessage, Role: "user", SpanID: "r", Agent: "planner", Time: at(0)},
		{Kind: trace.KindMessage, Role: "assistant", SpanID: "l1", Agent: "planner", Time: at(1000)},
		{Kind: trace.KindMessage, Role: "user", SpanID: "a2", Agent: "coder", Time: at(1100)},
		{Kind: trace.KindFinal, Role: "assistant", SpanID: "l2", Agent: "coder", Time: at(3000)},
	}
	codex := []trace.Step{
		{Kind: trace.KindMessage, Role: "user", Text: "Begin  investigation", Time: at(0)},
		{Kind: trace.KindReasoning, Role: "assistant", Text: "Start with an inventory.", Time: at(1600)},
		{Kind: trace.KindToolCall, Role: "assistant", Tool: "shell", Time: at(3600), Tokens: 17, Pair: pair(3)},
		{Kind: trace.KindToolResult, Role: "tool", Tool: "shell", Time: at(3700), ExitCode: &exit1, Pair: pair(2)},
		{Kind: trace.KindMessage, Role: "assistant", Text: "untimed"},
		{Kind: trace.KindFinal, Role: "assistant", Text: "Done.", Time: at(65000)},
	}
	// The same trace's span tree, as traces from OpenTelemetry keep it: the
	// HTTP call under fetch_claim wrote no step, and the tool spans sit
	// under the LLM span that called them.
	tree := []trace.Span{
		{ID: "a1", Name: "invoke_agent triage", Start: at(0), End: at(9500)},
		{ID: "b2", Parent: "a1", Name: "chat", Start: at(100), End: at(1900)},
		{ID: "c3", Parent: "b2", Name: "execute_tool lookup_policy", Start: at(1950), End: at(2600)},
		{ID: "e5", Parent: "a1", Name: "chat", Start: at(2700), End: at(3800)},
		{ID: "f6", Parent: "e5", Name: "execute_tool fetch_claim", Start: at(3850), End: at(8900), Failed: true},
		{ID: "99", Parent: "f6", Name: "GET /claims", Start: at(3900), End: at(8850), Failed: true},
		{ID: "07", Parent: "a1", Name: "chat", Start: at(9000), End: at(9400)},
		{ID: "88", Parent: "a1", Name: "GET /later", Start: at(20000), End: at(21000)}, // after the page
	}
	late := append(append([]trace.Step(nil), otel...), trace.Step{Kind: trace.KindMessage, Role: "user", SpanID: "x9", Time: at(9450)})
	tests := []struct {
		name  string
		steps []trace.Step
		from  int // the page's first step
		tree  []trace.Span
		root  string
		want  []string // nil: no waterfall
	}{
		{"a span tree", late, 0, tree, "a1", []string{
			"invoke_agent triage [0] 9.5 s @triage", ". chat [1 2 3] 1.8 s 31tok !FM-1.3 !decisive error", ". . execute_tool lookup_policy [4] 650 ms",
			". chat [5] 1.1 s 22tok", ". . execute_tool fetch_claim [6] 5.0 s x", ". . . GET /claims [] 5.0 s x", ". chat [7] 400 ms 74tok",
			"message [8] 0 ms"}},
		{"spans", otel, 0, nil, "a1", []string{
			"agent [0] 9.4 s @triage", ". LLM [1 2 3] 1.7 s 31tok !FM-1.3 !decisive error", ". tool lookup_policy [4] 700 ms", ". LLM [5] 1.2 s 22tok",
			". tool fetch_claim [6] 5.1 s x", ". LLM [7] 500 ms 74tok"}},
		// Without its root span the LLM spans stand side by side.
		{"spans, no root", otel[1:], 1, nil, "a1", []string{
			"LLM [1 2 3] 1.7 s @triage 31tok !FM-1.3 !decisive error", "tool lookup_policy [4] 700 ms @triage", "LLM [5] 1.2 s @triage 22tok",
			"tool fetch_claim [6] 5.1 s @triage x", "LLM [7] 500 ms @triage 74tok"}},
		{"nested spans", nested, 0, nil, "", []string{"LLM [0 3] 1.0 s !FM-1.3 !decisive error", ". tool t [1 2] 700 ms !FM-1.3", "message [4] 0 ms"}},
		{"a handoff", handoff, 0, nil, "r", []string{"agent [0] 3.0 s @planner", ". LLM [1] 1.0 s", ". agent [2] 0 ms @coder !FM-1.3", ". LLM [3] 1.9 s @coder !FM-1.3 !decisive error"}},
		{"steps", codex, 0, nil, "", []string{
			"message Begin investigation [0] 0 ms", "reasoning Start with an inventory. [1] 1.6 s", "call shell [2] 2.0 s 17tok !FM-1.3",
			"result shell [3] 100 ms x !FM-1.3 !decisive error", "final Done. [5] 1m1s"}},
		{"one timed step", codex[4:], 4, nil, "", nil},
		{"untimed", []trace.Step{{Kind: trace.KindMessage}, {Kind: trace.KindFinal}}, 0, nil, "", nil},
	}
	// Findings at steps 2 and 3: the rows that hold them are flagged.
	found := stepFindings([]trace.Finding{
		{Mode: "FM-1.3", Source: "detector", Verdict: trace.Present, Steps: []int{2, 3}},
		{RawLabel: "decisive error", Source: "human:a", Verdict: trace.Present, Steps: []int{3}},
		{Mode: "FM-2.6", Source: "human:a", Verdict: trace.Absent, Steps: []int{1}},
	})
	for _, tc := range tests {
		steps := append([]trace.Step(nil), tc.steps...)
		for i := range steps {
			steps[i].Index = tc.from + i
		}
		w := newWaterfall(steps, tc.from, tc.tree, tc.root, found)
		if w == nil {
			if tc.want != nil {
				t.Errorf("%s: no waterfall", tc.name)
			}
			continue
		}
		if got := bars(w); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got  %q\n want %q", tc.name, got, tc.want)
		}
		if w.Folded {
			t.Errorf("%s: folded with %d rows", tc.name, len(w.Rows))
		}
	}
	// A long page's waterfall is folded, to be opened.
	var long []trace.Step
	for i := range foldRows + 1 {
		long = append(long, trace.Step{Index: i, Kind: trace.KindMessage, Role: "user", Time: at(i)})
	}
	if w := newWaterfall(long, 0, nil, "", nil); w == nil || !w.Folded {
		t.Error("a waterfall of many rows is open")
	}
}

// The parts of the trace page that lay out what a trace holds (the
// summary, the arguments, the waterfall and its spans) escape it like the
// rest.
func TestTraceLayoutEscapes(t *testing.T) {
	const script = `<script>alert(1)</script>`
	at := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
	tr := &trace.Trace{ID: "evil", Format: "otlp-json", Source: "evil.json", Meta: map[string]string{"otel.root_span_id": script, "cost_usd": script}}
	tr.Append(trace.Step{Kind: trace.KindMessage, Role: "user", Agent: script, SpanID: script, Text: "go", Time: at})
	tr.Append(trace.Step{Kind: trace.KindToolCall, Role: "assistant", Agent: script, SpanID: "b", Tool: script, CallID: "c", Time: at.Add(time.Second),
		Args: `{"command":["echo","` + script + `"],"` + script + `":"` + script + `"}`})
	tr.Append(trace.Step{Kind: trace.KindToolResult, Role: "tool", Agent: script, SpanID: "c", Tool: script, CallID: "c", Text: strings.Repeat("ok", 1000), Time: at.Add(2 * time.Second)})
	tr.Link()
	tr.Findings = []trace.Finding{
		{Mode: "FM-1.3", Source: "judge:" + script, Verdict: trace.Present, Steps: []int{1}},
		{Source: "human:" + script, Verdict: trace.Present, Steps: []int{2}, RawLabel: script},
		{Mode: "FM-2.6", Source: "human:" + script, Verdict: trace.Absent},
	}
	st := openStore(t)
	put(t, st, "/evil.json", tr)
	page := serve(t, Config{Store: st}).ok("/traces/evil")
	if strings.Contains(page, "<script>alert") {
		t.Error("a trace's content reached the page as markup")
	}
	for _, want := range []string{
		`id="waterfall"`, `id="summary"`, `pre class="txt cmd"`, // the parts are there
		`echo &lt;script&gt;alert(1)&lt;/script&gt;`,                    // the command
		`tool &lt;script&gt;alert(1)&lt;/script&gt;`,                    // a tool span's label
		`<b>&lt;script&gt;alert(1)&lt;/script&gt; (mode not given)</b>`, // a label of no known mode
		`<span class="meta">1 line, 2 KB</span>`,                        // a long line, folded
		`<a class="mode-code" href="/modes/FM-1.3"`,                     // a mode, linked
		`$&lt;script&gt;alert(1)&lt;/script&gt;`,                        // the cost
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// A trace longer than a page: the waterfall says which steps it covers.
func TestWaterfallOfAPage(t *testing.T) {
	tr := &trace.Trace{ID: "long", Format: "codex", Source: "long.jsonl"}
	at := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
	for i := range stepsPerPage + 50 {
		tr.Append(trace.Step{Kind: trace.KindMessage, Role: "assistant", Text: fmt.Sprint("thought ", i), Time: at.Add(time.Duration(i) * time.Second)})
	}
	st := openStore(t)
	put(t, st, "/long.jsonl", tr)
	b := serve(t, Config{Store: st})
	for path, want := range map[string]string{
		"/traces/long":          "steps 0–199 of 250, 3m19s",
		"/traces/long?from=200": "steps 200–249 of 250, 49.0 s",
	} {
		if page := b.ok(path); !strings.Contains(page, want) || !strings.Contains(page, `<details class="waterfall">`) {
			t.Errorf("%s: the waterfall does not say %q, or is open", path, want)
		}
	}
}

// The summary of a trace no source has annotated, the detectors included,
// does not call it clean.
func TestSummaryUnannotated(t *testing.T) {
	st := openStore(t)
	tr := agentRun("raw", "m", true, "ok")
	if _, err := ingest.StoreFile(context.Background(), st, ingest.FileInfo{Path: "/raw.jsonl", Hash: "raw", Format: "codex"}, tr); err != nil {
		t.Fatal(err)
	}
	put(t, st, "/checked.jsonl", agentRun("checked", "m", true, "ok"))
	b := serve(t, Config{Store: st})
	for id, want := range map[string]string{"raw": "nothing yet: no source has annotated this trace", "checked": "no mode present"} {
		if page := b.ok("/traces/" + id); !strings.Contains(page, want) {
			t.Errorf("%s: the summary does not say %q", id, want)
		}
	}
}

// A trace that keeps its span tree shows it: spans that wrote no step are
// rows too, without a step to link to, and their names are escaped.
func TestTracePageSpanTree(t *testing.T) {
	const script = `<script>alert(1)</script>`
	at := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
	tr := &trace.Trace{ID: "tree", Format: "otlp-json", Source: "tree.json"}
	tr.Append(trace.Step{Kind: trace.KindMessage, Role: "user", SpanID: "a", Text: "go", Time: at})
	tr.Append(trace.Step{Kind: trace.KindFinal, Role: "assistant", SpanID: "b", Text: "done", Time: at.Add(2 * time.Second)})
	tr.SetSpans([]trace.Span{
		{ID: "a", Name: "invoke_agent", Start: at, End: at.Add(2 * time.Second)},
		{ID: "b", Parent: "a", Name: "chat", Start: at.Add(time.Second), End: at.Add(2 * time.Second)},
		{ID: "c", Parent: "a", Name: "GET " + script, Start: at.Add(100 * time.Millisecond), End: at.Add(900 * time.Millisecond)},
	})
	st := openStore(t)
	put(t, st, "/tree.json", tr)
	page := serve(t, Config{Store: st}).ok("/traces/tree")
	for _, want := range []string{`>GET &lt;script&gt;alert(1)&lt;/script&gt;`, `#0</a> invoke_agent`, `#1</a> chat`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>alert") {
		t.Error("a span's name reached the page as markup")
	}
}
