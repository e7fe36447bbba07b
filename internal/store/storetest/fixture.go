package storetest

import (
	"time"

	"github.com/faultline/faultline/trace"
)

// Cohort is the fixture: a few traces with what the readers tell apart.
// Several sources (a silent detector run, a judge, a labeller, two
// annotators), located and unlocated findings, absent and unmapped ones;
// decided, undecided and missing outcomes; models written two ways; steps
// with tool calls, exit codes, times and words to search for, accents and
// a file name among them.
func Cohort() []*trace.Trace {
	yes, no := true, false
	one, half := 1.0, 0.5
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	mk := func(id, model, system string, started time.Time, steps int, detected string, outcomes []trace.Outcome, fs ...trace.Finding) *trace.Trace {
		t := &trace.Trace{ID: id, Format: "codex", Source: "/data/run/cohort.jsonl#" + id, Model: model, System: system, Scenario: "2",
			Task: "find the root cause", Started: started, DetectedWith: detected, Outcomes: outcomes, Findings: fs}
		for i := range steps {
			t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant, Text: "looking at step " + string(rune('a'+i))})
		}
		return t
	}
	f := func(src, mode string, v trace.Verdict, steps ...int) trace.Finding {
		return trace.Finding{Source: src, Mode: mode, Verdict: v, Steps: steps, Quote: "step", Explanation: "because", Confidence: 0.75}
	}
	a := mk("trace-a", "m1", "itbench-zero", at, 8, "r1",
		[]trace.Outcome{{Source: "itbench", Metric: "root_cause_recall", Score: &one, Success: &yes}},
		f("detector", "FM-1.3", trace.Present, 4, 2), f("judge:x", "FM-1.3", trace.Present, 7), f("judge:x", "FM-2.6", trace.Absent),
		f("human:ann", "FM-3.3", trace.Present))
	a.Steps[3] = trace.Step{Index: 3, Kind: trace.KindToolCall, Tool: "shell", Args: `{"cmd":"kubectl logs café-pod"}`, CallID: "c1",
		Time: at.Add(time.Second)}
	a.Steps[4] = trace.Step{Index: 4, Kind: trace.KindToolResult, Tool: "shell", CallID: "c1", Text: "Error: agent_output.json not found",
		ExitCode: intp(1), IsError: true, Pair: intp(3), Time: at.Add(2 * time.Second), Tokens: 12, SpanID: "00f067aa0ba902b7"}
	a.Usage = trace.Usage{InputTokens: 100, OutputTokens: 20}
	a.Meta = map[string]string{"run": "7"}
	a.Diagnosis = &trace.Diagnosis{Source: "trace step 7", Body: `{"root_cause": "disk"}`}
	return []*trace.Trace{
		a,
		mk("trace-b", "openai/m1", "itbench-zero", at.Add(time.Hour), 3, "",
			[]trace.Outcome{{Source: "itbench", Metric: "root_cause_recall", Detail: `{"status":"not a diagnosis","problem":"a remediation task"}`}},
			f("mad:annotator_1", "FM-1.1", trace.Present, 0), f("mad:annotator_2", "", trace.Present)),
		mk("trace-c", "m2", "other", at.Add(-time.Hour), 5, "r1",
			[]trace.Outcome{{Source: "labels", Success: &no}, {Source: "format", Score: &half, Success: &yes}},
			f("detector", "SYS-1", trace.Present, 3), f("judge:x", "FM-1.3", trace.Absent)),
		mk("trace-d", "m2", "other", time.Time{}, 2, "r1", nil),
	}
}

func intp(n int) *int { return &n }
