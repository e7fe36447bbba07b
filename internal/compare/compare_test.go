package compare

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/shared"
	"github.com/faultline/faultline/trace"
)

func call(tool, args string) *trace.Step {
	return &trace.Step{Kind: trace.KindToolCall, Tool: tool, Args: args}
}

func TestAffinity(t *testing.T) {
	tests := []struct {
		name string
		x, y *trace.Step
		want int
	}{
		{"a script and an argv in other directories", call("shell", `{"command":["bash","-lc","ls -R /home/a/snap/Scenario-2"]}`),
			call("shell", `{"command":["ls","-R","/Users/b/x/Scenario-2/"]}`), weightExact},
		{"every shell tool is one", call("exec_command", `{"cmd":"cat /w/1/alerts.json"}`), call("shell", `{"command":"cat /w/2/alerts.json"}`), weightExact},
		{"ids and timestamps masked", call("shell", `{"command":"kubectl logs pod-3f2a9c81b7e4d5 --since-time=2025-12-15T17:28:00Z"}`),
			call("shell", `{"command":"kubectl logs pod-9a8b7c6d5e4f3a --since-time=2025-12-16T09:01:12Z"}`), weightExact},
		{"other flags, same operands", call("shell", `{"command":"ls -1 /d/alerts"}`), call("shell", `{"command":"ls -F /e/alerts"}`), weightMain},
		{"wrappers and assignments skipped", call("shell", `{"command":"sudo LANG=C kubectl get pods -A"}`), call("shell", `{"command":"kubectl get pods"}`), weightMain},
		{"same program, other operands", call("shell", `{"command":"head -n 20 /d/a.tsv"}`), call("shell", `{"command":"head -n 50 /d/a.tsv"}`), weightProgram},
		{"the program of the first command", call("shell", `{"command":"grep -i error /d/logs.tsv | head"}`), call("shell", `{"command":"grep fraud /d/events.tsv"}`), weightProgram},
		{"a write is not a read", call("shell", `{"command":"cat > /w/out.json <<EOF\n{}\nEOF"}`), call("shell", `{"command":"cat /w/out.json"}`), 0},
		{"other programs", call("shell", `{"command":"ls /d"}`), call("shell", `{"command":"cat /d/x"}`), 0},
		{"named arguments in other directories", call("mcp__srv__event_analysis", `{"events_file":"/a/b/k8s_events.tsv","group_by":"reason"}`),
			call("mcp__srv__event_analysis", `{"group_by":"reason","events_file":"/c/d/k8s_events.tsv"}`), weightExact},
		{"other nested options", call("mcp__srv__event_analysis", `{"events_file":"/a/e.tsv","filters":{"reason":"Unhealthy"}}`),
			call("mcp__srv__event_analysis", `{"events_file":"/b/e.tsv","filters":{"reason":"Killing"}}`), weightMain},
		{"other scalar arguments", call("get_spec", `{"name":"otel-demo/Deployment/cart"}`), call("get_spec", `{"name":"otel-demo/Deployment/ad"}`), weightProgram},
		{"other tools", call("get_spec", `{"name":"x"}`), call("get_logs", `{"name":"x"}`), 0},
		{"plain text arguments", call("search", "root cause"), call("search", "root  cause"), weightExact},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, y := signatureOf(tt.x), signatureOf(tt.y)
			kx, ky := keysOf([]signature{x}, []signature{y})
			if got := affinity(&kx[0], &ky[0]); got != tt.want {
				t.Errorf("affinity %d, want %d\n%q\n%q", got, tt.want, x, y)
			}
			if got := affinity(&ky[0], &kx[0]); got != tt.want {
				t.Errorf("not symmetric: %d", got)
			}
		})
	}
}

func TestLabel(t *testing.T) {
	tests := []struct {
		step *trace.Step
		want string
	}{
		{call("shell", `{"command":["bash","-lc","ls -R /Users/a/snap/Scenario-2"]}`), "ls -R …/Scenario-2"},
		{call("shell", `{"command":"jq . agent_output.json ~/out/x.json /tmp"}`), "jq . agent_output.json …/x.json /tmp"},
		{call("mcp__offline__log_analysis", `{"logs_file":"/a/b/logs.tsv","limit":5}`), "log_analysis limit=5 logs_file=…/logs.tsv"},
		{call("search", "a\nb"), "search a b"},
	}
	for _, tt := range tests {
		if got := signatureOf(tt.step).label; got != tt.want {
			t.Errorf("%s: label %q, want %q", tt.step.Args, got, tt.want)
		}
	}
}

// sigs makes a signature per word: calls of the same word pair exactly,
// of words with the same first letter loosely.
func sigs(words string) []signature {
	var out []signature
	for _, w := range strings.Fields(words) {
		out = append(out, signature{full: w, main: w, program: w[:1], label: w})
	}
	return out
}

func TestAlign(t *testing.T) {
	tests := []struct {
		a, b string
		want string // pairs a:b, "-" for a gap
	}{
		{"", "", ""},
		{"ls cat", "", "0:- 1:-"},
		{"", "ls", "-:0"},
		{"ls cat grep", "ls grep", "0:0 1:- 2:1"},
		{"ls head jq", "ls jq", "0:0 1:- 2:1"},
		{"ls cat", "cat ls", "0:- 1:0 -:1"},
		// An exact pair wins over a looser one before it.
		{"gx gy", "gy", "0:- 1:0"},
		{"ls hx", "ls hy", "0:0 1:1"},
		{"aa bb", "cc", "0:- 1:- -:0"},
	}
	for _, tt := range tests {
		var got []string
		for _, p := range align(sigs(tt.a), sigs(tt.b)) {
			side := func(i int) string {
				if i < 0 {
					return "-"
				}
				return fmt.Sprint(i)
			}
			got = append(got, side(p.a)+":"+side(p.b))
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("align(%q, %q) = %q, want %q", tt.a, tt.b, strings.Join(got, " "), tt.want)
		}
	}
}

// Split in halves (as long runs are), an alignment is as good as the full
// table's, and still pairs every call once, in order.
func TestAlignSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	word := func() string { return string(rune('a'+r.IntN(4))) + string(rune('a'+r.IntN(3))) }
	for round := range 50 {
		var a, b []string
		for range 5 + r.IntN(40) {
			a = append(a, word())
		}
		for range r.IntN(40) {
			b = append(b, word())
		}
		sa, sb := keysOf(sigs(strings.Join(a, " ")), sigs(strings.Join(b, " ")))
		whole := aligner{a: sa, b: sb}
		whole.table(0, len(sa), 0, len(sb))
		// Tables of one cell: every split is taken.
		split := aligner{a: sa, b: sb, cells: 1}
		split.run(0, len(sa), 0, len(sb))
		if s, w := total(sa, sb, split.out), total(sa, sb, whole.out); s != w {
			t.Errorf("round %d: split alignment scores %d, the table %d", round, s, w)
		}
		checkAlignment(t, split.out, len(sa), len(sb))
		checkAlignment(t, whole.out, len(sa), len(sb))
	}
}

func total(a, b []key, ps []pair) int {
	sum := 0
	for _, p := range ps {
		if p.a >= 0 && p.b >= 0 {
			w := affinity(&a[p.a], &b[p.b])
			if w == 0 {
				return -1 // a pair that may not be
			}
			sum += w
		}
	}
	return sum
}

func checkAlignment(t *testing.T, ps []pair, n, m int) {
	t.Helper()
	na, nb := 0, 0
	for _, p := range ps {
		if p.a >= 0 {
			if p.a != na {
				t.Fatalf("a's call %d out of order in %v", p.a, ps)
			}
			na++
		}
		if p.b >= 0 {
			if p.b != nb {
				t.Fatalf("b's call %d out of order in %v", p.b, ps)
			}
			nb++
		}
	}
	if na != n || nb != m {
		t.Fatalf("%d of %d and %d of %d calls aligned", na, n, nb, m)
	}
}

// run builds a trace of steps written as "kind text": u (user), r
// (reasoning), c (a shell call of the text; its result follows, failed
// when the text starts with "!"), f (final).
func run(id string, steps ...string) *trace.Trace {
	tr := &trace.Trace{ID: id, Format: "codex", Model: "m-" + id}
	for n, s := range steps {
		kind, text, _ := strings.Cut(s, " ")
		switch kind {
		case "u":
			tr.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleUser, Text: text})
		case "r":
			tr.Append(trace.Step{Kind: trace.KindReasoning, Role: trace.RoleAssistant, Text: text})
		case "c":
			id := fmt.Sprint("c", n)
			exit := 0
			failed := strings.HasPrefix(text, "!")
			if failed {
				exit, text = 1, text[1:]
			}
			args, _ := json.Marshal(map[string]string{"command": text})
			tr.Append(trace.Step{Kind: trace.KindToolCall, Role: trace.RoleAssistant, Tool: "shell", Args: string(args), CallID: id})
			tr.Append(trace.Step{Kind: trace.KindToolResult, Role: trace.RoleTool, Tool: "shell", CallID: id, ExitCode: &exit, Text: "out"})
		case "f":
			tr.Append(trace.Step{Kind: trace.KindFinal, Role: trace.RoleAssistant, Text: text})
		}
	}
	tr.Link()
	return tr
}

func TestCompareRows(t *testing.T) {
	type row struct {
		kind  Kind
		match Match
		a, b  []int // steps; nil for a gap
	}
	tests := []struct {
		name   string
		a, b   *trace.Trace
		want   []row
		counts Counts
	}{
		{"same task, one extra call, other answers",
			run("a", "u Find the cause in /data/1/snap", "r look first", "c ls /data/1/snap", "c cat /data/1/snap/alerts.json", "f cart"),
			run("b", "u Find the cause in /data/2/snap", "c ls -la /data/2/snap", "r now the alerts", "c !head /data/2/snap/alerts.json", "c cat /data/2/snap/alerts.json", "f ad"),
			[]row{
				{KindOpening, MatchExact, []int{0}, []int{0}},
				{KindCall, MatchSimilar, []int{1, 2, 3}, []int{1, 2}},
				{KindCall, MatchOnlyB, nil, []int{3, 4, 5}},
				{KindCall, MatchExact, []int{4, 5}, []int{6, 7}},
				{KindClosing, MatchDifferent, []int{6}, []int{8}},
			},
			Counts{Exact: 1, Similar: 1, OnlyB: 1}},
		{"no calls on one side",
			run("a", "u task", "f I cannot"),
			run("b", "u other task", "c ls", "c ls"),
			[]row{
				{KindOpening, MatchDifferent, []int{0}, []int{0}},
				{KindCall, MatchOnlyB, nil, []int{1, 2}},
				{KindCall, MatchOnlyB, nil, []int{3, 4}},
				{KindClosing, MatchOnlyA, []int{1}, nil},
			},
			Counts{OnlyB: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Compare(tt.a, tt.b)
			var got []row
			for _, r := range c.Rows {
				g := row{kind: r.Kind, match: r.Match}
				if r.A != nil {
					g.a = r.A.Steps
				}
				if r.B != nil {
					g.b = r.B.Steps
				}
				got = append(got, g)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("rows\n%v\nwant\n%v", got, tt.want)
			}
			if c.Counts != tt.counts {
				t.Errorf("counts %+v, want %+v", c.Counts, tt.counts)
			}
		})
	}
	c := Compare(tests[0].a, tests[0].b)
	if r := c.Rows[2]; r.B.Label != "head …/alerts.json" || !r.B.Failed || r.B.Call == nil || *r.B.Call != 4 {
		t.Errorf("the failed call's cell: %+v", r.B)
	}
	if r := c.Rows[0]; r.A.Label != "Find the cause in …/snap" || r.A.Call != nil {
		t.Errorf("the opening's cell: %+v", r.A)
	}
}

func TestSides(t *testing.T) {
	yes, no, one := true, false, 1.0
	a := run("a", "u task", "c ls", "f done")
	a.Usage = trace.Usage{InputTokens: 100, OutputTokens: 20}
	a.Started = time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	a.Ended = a.Started.Add(90 * time.Second)
	a.Outcomes = []trace.Outcome{{Source: "format", Success: &no}, {Source: "itbench", Metric: "root_cause_recall", Score: &one, Success: &yes}}
	a.Findings = []trace.Finding{
		{Mode: "FM-1.3", Source: "detector", Verdict: trace.Present},
		{Mode: "FM-1.3", Source: "detector", Verdict: trace.Present},
		{Mode: "FM-3.1", Source: "judge:x", Verdict: trace.Absent},
		{Mode: "FM-2.6", Source: "judge:x", Verdict: trace.Present},
	}
	b := run("b", "u task", "c ls", "c ls")
	b.Steps[1].Tokens, b.Steps[3].Tokens = 7, 5
	b.Steps[0].Time = a.Started
	b.Steps[4].Time = a.Started.Add(time.Minute)
	b.Findings = []trace.Finding{{Mode: "FM-3.1", Source: "detector", Verdict: trace.Present}, {Mode: "FM-1.3", Source: "human:x", Verdict: trace.Present}}
	c := Compare(a, b)
	tests := []struct {
		name      string
		got, want any
	}{
		{"A's tokens", c.A.Tokens, 120},
		{"B's tokens, from its steps", c.B.Tokens, 12},
		{"A's duration", c.A.Duration, 90 * time.Second},
		{"B's duration, from its steps", c.B.Duration, time.Minute},
		{"A's outcome, the primary", c.A.Outcome.Source, "itbench"},
		{"B has none", c.B.Outcome == nil, true},
		{"A's modes", fmt.Sprint(c.A.Modes), "[{detector [FM-1.3]} {judge:x [FM-2.6]}]"},
		{"the modes of both", fmt.Sprint(c.Modes), "[{FM-1.3 true true} {FM-2.6 true false} {FM-3.1 false true}]"},
		{"steps and calls", [4]int{c.A.Steps, c.A.ToolCalls, c.B.Steps, c.B.ToolCalls}, [4]int{4, 1, 5, 2}},
	}
	for _, tt := range tests {
		if fmt.Sprint(tt.got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	out, err := json.Marshal(c.B)
	if err != nil || !strings.Contains(string(out), `"duration_seconds":60`) || !strings.Contains(string(out), `"outcome":null`) {
		t.Errorf("B as JSON: %s %v", out, err)
	}
}

// Two real rollouts of the same incident by two models: gpt-oss-120b
// (019bc2a7, 25 calls, shell only) and gemini-3-flash-preview (019bc313,
// 67 calls, mostly the incident-analysis tools). Both start by listing the
// snapshot directory and end by printing agent_output.json with jq.
func TestRealPair(t *testing.T) {
	dir := shared.Path(t, "itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1")
	traces, _, err := ingest.ReadAll(context.Background(), []string{dir}, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	byPrefix := func(p string) *trace.Trace {
		for _, tr := range traces {
			if strings.HasPrefix(tr.ID, p) {
				fs, _ := detect.Run(tr, detect.All)
				tr.Findings = append(tr.Findings, fs...)
				return tr
			}
		}
		t.Fatalf("no trace %s in %s", p, dir)
		return nil
	}
	a, b := byPrefix("019bc2a7"), byPrefix("019bc313")
	c := Compare(a, b)
	calls := [2][]int{}
	for _, r := range c.Rows {
		for side, cell := range []*Cell{r.A, r.B} {
			tr := []*trace.Trace{a, b}[side]
			if cell == nil {
				continue
			}
			for _, s := range cell.Steps {
				if tr.Step(s) == nil {
					t.Fatalf("row %+v cites step %d, which %s does not have", r, s, tr.ID)
				}
			}
			if r.Kind == KindCall {
				if cell.Call == nil || tr.Steps[*cell.Call].Kind != trace.KindToolCall || !slices.Contains(cell.Steps, *cell.Call) {
					t.Fatalf("row %+v: its call is not a call among its steps", r)
				}
				calls[side] = append(calls[side], *cell.Call)
			}
		}
	}
	if len(calls[0]) != a.CountKind(trace.KindToolCall) || len(calls[1]) != b.CountKind(trace.KindToolCall) {
		t.Errorf("%d and %d calls in the rows, of %d and %d", len(calls[0]), len(calls[1]), a.CountKind(trace.KindToolCall), b.CountKind(trace.KindToolCall))
	}
	find := func(label string) *Row {
		for i := range c.Rows {
			if r := &c.Rows[i]; r.A != nil && r.B != nil && r.A.Label == label {
				return r
			}
		}
		return nil
	}
	for _, want := range []struct {
		label string
		a, b  int
	}{
		{"ls -R …/Scenario-2", 3, 5},        // the first look at the snapshot
		{"jq . agent_output.json", 52, 133}, // the answer checked
	} {
		r := find(want.label)
		if r == nil || r.Match != MatchExact || *r.A.Call != want.a || *r.B.Call != want.b {
			t.Errorf("%s: row %+v, want calls %d and %d aligned exactly", want.label, r, want.a, want.b)
		}
	}
	if c.Counts.Exact+c.Counts.Similar+c.Counts.OnlyA != 25 || c.Counts.Exact+c.Counts.Similar+c.Counts.OnlyB != 67 {
		t.Errorf("counts %+v", c.Counts)
	}
	if c.A.Model != "gpt-oss-120b-custom" || c.B.Model != "gemini-3-flash-preview" || c.A.Scenario != c.B.Scenario {
		t.Errorf("sides: %+v %+v", c.A, c.B)
	}
	if !slices.ContainsFunc(c.Modes, func(m Mode) bool { return m.Mode == "FM-1.3" && m.A && m.B }) {
		t.Errorf("both runs repeat a call (FM-1.3): %+v", c.Modes)
	}
}
