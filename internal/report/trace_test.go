package report

import (
	"strings"
	"testing"
	"unicode"

	"github.com/faultline/faultline/internal/judge"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// evil is what a hostile trace may hold: a window title change, a clear
// screen, an 8-bit CSI, a carriage return that would hide what precedes it,
// and a line break where one line is expected.
const evil = "\x1b]0;pwned\x07\x1b[2J\u009b31m\rhidden\nfindings  none"

func TestWriteTraceEscapes(t *testing.T) {
	tests := []struct {
		name string
		put  func(*trace.Trace, *store.JudgeRecord)
	}{
		{"id", func(tr *trace.Trace, _ *store.JudgeRecord) { tr.ID = evil }},
		{"model", func(tr *trace.Trace, _ *store.JudgeRecord) { tr.Model = evil }},
		{"system, scenario, trial", func(tr *trace.Trace, _ *store.JudgeRecord) { tr.System, tr.Scenario, tr.Trial = evil, evil, evil }},
		{"source", func(tr *trace.Trace, _ *store.JudgeRecord) { tr.Source = evil }},
		{"task", func(tr *trace.Trace, _ *store.JudgeRecord) { tr.Task = "**Task**: " + evil }},
		{"diagnosis", func(tr *trace.Trace, _ *store.JudgeRecord) { tr.Diagnosis = &trace.Diagnosis{Source: evil} }},
		{"outcome metric", func(tr *trace.Trace, _ *store.JudgeRecord) {
			yes, one := true, 1.0
			tr.Outcomes = []trace.Outcome{{Source: "official", Metric: evil, Score: &one, Success: &yes}}
		}},
		{"step text", func(tr *trace.Trace, _ *store.JudgeRecord) { tr.Steps[0].Text = evil }},
		{"step agent and type", func(tr *trace.Trace, _ *store.JudgeRecord) { tr.Steps[0].Agent, tr.Steps[0].Type = evil, evil }},
		{"tool and arguments", func(tr *trace.Trace, _ *store.JudgeRecord) { tr.Steps[1].Tool, tr.Steps[1].Args = evil, evil }},
		{"tool output", func(tr *trace.Trace, _ *store.JudgeRecord) { tr.Steps[2].Text = evil }},
		{"finding", func(tr *trace.Trace, _ *store.JudgeRecord) {
			tr.Findings[0].Source, tr.Findings[0].Detector, tr.Findings[0].Quote, tr.Findings[0].Explanation = evil, evil, evil, evil
		}},
		{"label of unknown mode", func(tr *trace.Trace, _ *store.JudgeRecord) {
			tr.Findings = append(tr.Findings,
				trace.Finding{RawLabel: evil, Verdict: trace.Present, Steps: []int{1}, Source: "whowhen"},
				trace.Finding{RawLabel: evil + "2", Verdict: trace.Present, Source: "mad"})
		}},
		{"judgement", func(_ *trace.Trace, r *store.JudgeRecord) {
			r.Source, r.Status, r.Error, r.Summary, r.TaskSuccess = evil, judge.StatusFailed, evil, evil, evil
		}},
	}
	for _, tt := range tests {
		zero := 0
		tr := &trace.Trace{ID: "t1", Model: "m", Format: "codex", Source: "f.jsonl", Task: "**Task**: fix the deployment please",
			Steps: []trace.Step{
				{Index: 0, Kind: trace.KindMessage, Role: "user", Text: "fix it"},
				{Index: 1, Kind: trace.KindToolCall, Tool: "shell", Args: `{"cmd":"ls"}`},
				{Index: 2, Kind: trace.KindToolResult, Tool: "shell", ExitCode: &zero, Text: "a\n\tb"},
			},
			Findings: []trace.Finding{{Mode: "FM-1.3", Verdict: trace.Present, Source: "detector", Detector: "d", Steps: []int{2}, Quote: "b", Explanation: "why"}},
		}
		rec := store.JudgeRecord{Source: "judge:m", Status: judge.StatusOK, Summary: "fine"}
		tt.put(tr, &rec)
		var b strings.Builder
		if err := WriteTrace(&b, tr, []store.JudgeRecord{rec}, TraceOptions{Full: true}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if i := strings.IndexFunc(out, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }); i >= 0 {
			t.Errorf("%s: a control character reached the terminal at byte %d:\n%q", tt.name, i, out)
		}
		if !strings.Contains(out, "\ufffd]0;pwned\ufffd\ufffd[2J\ufffd31m\ufffdhidden") {
			t.Errorf("%s: the content is not shown, escaped:\n%s", tt.name, out)
		}
		// Only the view starts its lines: a line break in a field of one
		// line does not make a line of its own.
		if strings.Contains(out, "\nfindings  none") {
			t.Errorf("%s: a trace's line break made a line of the view:\n%s", tt.name, out)
		}
		// Text laid out in lines keeps its lines, indented, and its tabs.
		if tt.name != "tool output" && !strings.Contains(out, "      a\n      \tb\n") {
			t.Errorf("%s: the tool output lost its layout:\n%s", tt.name, out)
		}
	}
}
