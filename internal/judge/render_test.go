package judge

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/faultline/faultline/internal/shared"
	"github.com/faultline/faultline/trace"
)

func intp(i int) *int { return &i }

// handTrace has a task setup, a long tool output and an identical repeat.
func handTrace() *trace.Trace {
	long := "HEAD-LINE first words of the listing\n" + strings.Repeat("pod-a   Running   0   3d\n", 400) + "TAIL-LINE last words of the listing"
	t := &trace.Trace{ID: "hand", Format: "codex", Task: "Find the root cause of the incident."}
	t.Append(trace.Step{Kind: trace.KindSystem, Role: trace.RoleHarness, Text: "Instructions: Find the root cause of the incident. Write agent_output.json."})
	t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleUser, Text: "Begin investigation"})
	t.Append(trace.Step{Kind: trace.KindToolCall, Role: trace.RoleAssistant, Tool: "shell", CallID: "c1", Args: `{"command":["kubectl","get","pods","-A"]}`})
	t.Append(trace.Step{Kind: trace.KindToolResult, Role: trace.RoleTool, CallID: "c1", Text: long, ExitCode: intp(0)})
	t.Append(trace.Step{Kind: trace.KindToolCall, Role: trace.RoleAssistant, Tool: "shell", CallID: "c2", Args: `{"command":["kubectl","get","pods","-A","--again"]}`})
	t.Append(trace.Step{Kind: trace.KindToolResult, Role: trace.RoleTool, CallID: "c2", Text: long, ExitCode: intp(1), IsError: true})
	t.Append(trace.Step{Kind: trace.KindFinal, Role: trace.RoleAssistant, Text: "The root cause is the flagd-config ConfigMap."})
	t.Link()
	t.Findings = []trace.Finding{
		{Mode: "FM-1.3", Source: "detector", Detector: "repeated-tool-call", Verdict: trace.Present, Steps: []int{4, 5}, Quote: "kubectl", Explanation: "The same listing twice."},
		{Mode: "FM-2.2", Source: "mad:annotator_1", Verdict: trace.Present, Steps: []int{1}},
	}
	return t
}

func TestRenderStepsCutsAndReferences(t *testing.T) {
	tr := handTrace()
	r := render(tr, RenderOptions{OutputChars: 600, TextChars: 400, TaskChars: 1000}, "detector")
	if r.setup != 2 {
		t.Errorf("task setup = %d steps, want 2", r.setup)
	}
	text := r.stepsText(seq(0, len(tr.Steps)))
	for _, want := range []string{
		"[S0 system harness]\nInstructions: Find the root cause",
		"[S2 tool_call assistant shell]\n{\"command\"",
		"[S3 tool_result shell exit=0 for S2]\nHEAD-LINE first words",
		"TAIL-LINE last words of the listing",
		"[S5 tool_result shell exit=1 error for S4]\n(identical to S3)",
		"[S6 final assistant]",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("rendering lacks %q:\n%s", want, text)
		}
	}
	// The marker says exactly how much was left out.
	m := regexp.MustCompile(`(?s)\[S3 [^\n]*\n(.*)\n\[… ([0-9,]+) characters cut …\]\n(.*?)\n\[S4`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no cut marker in S3:\n%s", text)
	}
	dropped, _ := strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
	full := compact(tr.Steps[3].Text)
	if got := utf8.RuneCountInString(m[1]) + dropped + utf8.RuneCountInString(m[3]); got < utf8.RuneCountInString(full)-2 || got > utf8.RuneCountInString(full) {
		t.Errorf("kept %d + cut %d + kept %d runes, the output has %d", utf8.RuneCountInString(m[1]), dropped, utf8.RuneCountInString(m[3]), utf8.RuneCountInString(full))
	}
	if len(m[1])+len(m[3]) > 700 {
		t.Errorf("kept %d bytes of a 600-character limit", len(m[1])+len(m[3]))
	}
	// The task is stated in a setup step, so it is not repeated in a TASK section.
	if strings.Contains(r.header, "TASK") {
		t.Errorf("header repeats the task:\n%s", r.header)
	}
	hints := r.hintsText(map[int]bool{4: true})
	if !strings.Contains(hints, "FM-1.3 Step repetition (detector repeated-tool-call) at S4, S5") || strings.Contains(hints, "FM-2.2") {
		t.Errorf("hints: %q", hints)
	}
	if r.hintsText(map[int]bool{0: true}) != "" {
		t.Error("a hint whose steps are not shown is listed")
	}
}

func TestRenderShowsTaskWhenNoStepHoldsIt(t *testing.T) {
	tr := handTrace()
	tr.Task = "A task stated nowhere in the steps."
	tr.Diagnosis = &trace.Diagnosis{Source: "agent_output.json", Body: `{"entities": []}`}
	r := render(tr, DefaultRender, "detector")
	if !strings.Contains(r.header, "TASK (given to the agent; not a step, do not quote it):\nA task stated nowhere") || !strings.Contains(r.header, "ANSWER FILE") {
		t.Errorf("header:\n%s", r.header)
	}
}

// Every piece of text the judge is shown, outside markers and references,
// must be quotable: compaction and cutting must never produce text that
// CheckEvidence cannot find in the step.
func TestRenderedTextIsQuotable(t *testing.T) {
	for _, tr := range loadTraces(t, examples) {
		r := render(tr, RenderOptions{OutputChars: 300, TextChars: 200, TaskChars: 500}, "detector")
		for i := range tr.Steps {
			body := strings.TrimPrefix(r.blocks[i], r.heads[i]+"\n")
			for _, part := range regexp.MustCompile(`\n\[… [0-9,]+ characters cut …\]\n`).Split(body, -1) {
				lines := strings.Split(strings.TrimSpace(part), "\n")
				for _, q := range []string{lines[0], lines[len(lines)-1], strings.TrimSpace(part)} {
					if strings.TrimSpace(q) == "" {
						continue
					}
					f := trace.Finding{Mode: "FM-1.3", Steps: []int{i}, Quote: q}
					if err := f.CheckEvidence(tr); err != nil {
						t.Fatalf("trace %s: %v", tr.ID, err)
					}
				}
			}
		}
	}
}

// compact keeps indentation (code in chat steps means nothing without it)
// and drops only trailing blanks and repeated empty lines.
func TestCompactKeepsIndentation(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"python block", "def f(x):\n    if x:\n        return 1\n    return 0", "def f(x):\n    if x:\n        return 1\n    return 0"},
		{"first line indented", "    return _cache[key]\nraise KeyError(key)", "    return _cache[key]\nraise KeyError(key)"},
		{"tabs kept", "func f() {\n\treturn\n}", "func f() {\n\treturn\n}"},
		{"inner spaces kept", "NAME    READY   STATUS\npod-a   1/1     Running", "NAME    READY   STATUS\npod-a   1/1     Running"},
		{"trailing blanks dropped", "a = 1   \n    b = 2\t \n", "a = 1\n    b = 2"},
		{"blank runs collapsed", "one\n\n\n   \n\t\ntwo\n\nthree", "one\n\ntwo\n\nthree"},
		{"empty lines at the ends", "\n\n  \n    x = 1\n\n\n", "    x = 1"},
		{"carriage returns", "if ok:\r\n    go()\r\n", "if ok:\n    go()"},
		{"only blanks", " \n\t\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compact(tt.in); got != tt.want {
				t.Errorf("compact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// A cut that ends at a line break keeps the indentation of the line its
// tail starts with.
func TestCutKeepsTailIndentation(t *testing.T) {
	body := "def f():\n" + strings.Repeat("    x = compute(x)\n", 200) + "    return x"
	got := cut(body, 600)
	if !strings.Contains(got, " characters cut …]\n    ") || !strings.HasSuffix(got, "\n    return x") {
		t.Errorf("cut lost the tail's indentation:\n%s", got)
	}
}

func TestSpanOf(t *testing.T) {
	tests := []struct {
		steps []int
		want  string
	}{
		{nil, ""},
		{[]int{3}, "S3"},
		{[]int{3, 4, 5, 6}, "S3-S6"},
		{[]int{2, 3, 4, 5, 6, 7, 12}, "S2-S7, S12"},
		{[]int{1, 3, 5, 6}, "S1, S3, S5-S6"},
	}
	for _, tt := range tests {
		if got := spanOf(tt.steps); got != tt.want {
			t.Errorf("spanOf(%v) = %q, want %q", tt.steps, got, tt.want)
		}
	}
}

// The real AG2 group chats hold Python that agents pass to each other: the
// judge must see it indented as written.
func TestRenderKeepsIndentationOfRealAG2Code(t *testing.T) {
	traces := loadTraces(t, shared.Path(t, "samples/ag2/raw_ag2_records.json"))
	indented := 0
	for _, tr := range traces {
		r := render(tr, RenderOptions{}, "detector")
		for i, s := range tr.Steps {
			for _, line := range strings.Split(s.Text, "\n") {
				line = strings.TrimRight(line, " \t\r")
				if !strings.HasPrefix(line, "    ") || strings.TrimSpace(line) == "" {
					continue
				}
				indented++
				if !strings.Contains(r.blocks[i], "\n"+line+"\n") {
					t.Fatalf("trace %s S%d: the indented line %q is not shown as written:\n%s", tr.ID, i, line, r.blocks[i])
				}
			}
		}
	}
	if indented == 0 {
		t.Fatal("no indented line in the AG2 records; the test checks nothing")
	}
}
