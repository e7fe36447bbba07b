package detect

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// build makes a trace from a compact script, one step (or call and result)
// a line. "\n" in texts stands for a newline; tool arguments are kept as
// written.
//
//	call TOOL ARGS => OUTPUT   a tool call and its successful result
//	fail TOOL ARGS => OUTPUT   a tool call and its failed result (exit 1)
//	pending TOOL ARGS          a tool call without a result
//	say TEXT                   an assistant message
//	final TEXT                 the assistant's final answer
//	think TEXT                 assistant reasoning
//	user TEXT                  a user message
//	nudge TEXT                 a harness retry nudge
//	harness TEXT               a harness message
//	system TEXT                a harness system event
//	instr TEXT                 the harness's standing instructions
//	error TYPE TEXT            a run-level error of the given type
//	agent NAME[@ROLE] TEXT     a message of a named agent (multi-agent formats)
//	task TEXT                  sets Trace.Task (no step)
//	diag BODY                  attaches a diagnosis file (no step)
func build(script ...string) *trace.Trace {
	t := &trace.Trace{ID: "t"}
	text := func(s string) string { return strings.ReplaceAll(s, `\n`, "\n") }
	for n, line := range script {
		verb, rest, _ := strings.Cut(line, " ")
		switch verb {
		case "call", "fail", "pending":
			call, out, _ := strings.Cut(rest, " => ")
			tool, args, _ := strings.Cut(call, " ")
			id := fmt.Sprintf("c%d", n)
			t.Append(trace.Step{Kind: trace.KindToolCall, Role: trace.RoleAssistant, Tool: tool, Args: args, CallID: id})
			if verb == "pending" {
				continue
			}
			r := trace.Step{Kind: trace.KindToolResult, Role: trace.RoleTool, Text: text(out), CallID: id}
			if verb == "fail" {
				one := 1
				r.ExitCode, r.IsError = &one, true
			}
			t.Append(r)
		case "say":
			t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant, Text: text(rest)})
		case "final":
			t.Append(trace.Step{Kind: trace.KindFinal, Role: trace.RoleAssistant, Text: text(rest)})
		case "think":
			t.Append(trace.Step{Kind: trace.KindReasoning, Role: trace.RoleAssistant, Text: text(rest)})
		case "user":
			t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleUser, Text: text(rest)})
		case "nudge":
			t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleHarness, Type: trace.TypeRetryNudge, Text: text(rest)})
		case "harness":
			t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleHarness, Text: text(rest)})
		case "silence":
			t.Append(trace.Step{Kind: trace.KindSystem, Role: trace.RoleHarness, Type: trace.TypeEmptyTurn, Text: "the model was given a turn and produced nothing"})
		case "system":
			t.Append(trace.Step{Kind: trace.KindSystem, Role: trace.RoleHarness, Text: text(rest)})
		case "instr":
			t.Append(trace.Step{Kind: trace.KindSystem, Role: trace.RoleHarness, Type: "instructions", Text: text(rest)})
		case "error":
			typ, msg, _ := strings.Cut(rest, " ")
			t.Append(trace.Step{Kind: trace.KindError, Role: trace.RoleHarness, Type: typ, Text: text(msg)})
		case "agent":
			who, msg, _ := strings.Cut(rest, " ")
			name, role, _ := strings.Cut(who, "@")
			t.Append(trace.Step{Kind: trace.KindMessage, Agent: name, Role: role, Text: text(msg)})
		case "task":
			t.Task = text(rest)
		case "diag":
			t.Diagnosis = &trace.Diagnosis{Source: "run dir", Body: text(rest)}
		default:
			panic("build: unknown verb " + verb)
		}
	}
	t.Link()
	return t
}

// zeroTask is a task prompt in the shape of ITBench Zero's, with the
// requirements the detectors read from it.
const zeroTask = `task You are an SRE investigating an incident.\n` +
	`You MUST NOT read ground_truth.yaml under any circumstances.\n` +
	`Your incident data is located in these directories (READ-ONLY):\n- /data/snap/7\n` +
	`Your working directory is: /work/run\n` +
	`Write your diagnosis to: /work/run/agent_output.json\n` +
	`You must validate json using ` + "`jq`" + ` in shell after writing the file.\n` +
	`Limit the explanation fields (` + "`reasoning`, `evidence`" + `) to no more than 2 sentences each.`

// A diagnosis that satisfies the Zero schema, and an apply_patch call that
// writes it.
const (
	goodAnswer  = `{"entities":[{"name":"otel-demo/ConfigMap/flagd-config","contributing_factor":true,"reasoning":"The flag changed.","evidence":"Changed at 14:02:11 in spec-change output."}],"propagations":[],"alerts_explained":[]}`
	writeAnswer = `call apply_patch {"input":"*** Begin Patch\n*** Add File: agent_output.json\n+{\"entities\":[{\"name\":\"otel-demo/ConfigMap/flagd-config\",\"contributing_factor\":true,\"reasoning\":\"The flag changed.\",\"evidence\":\"Changed at 14:02:11 in spec-change output.\"}],\"propagations\":[],\"alerts_explained\":[]}\n*** End Patch"} => Success. Updated the following files:\nA agent_output.json`
	validate    = `call shell {"command":["bash","-lc","jq . agent_output.json"]} => ` + goodAnswer
	readAlerts  = `call mcp__srv__alert_summary {"base_dir":"/data/snap/7/alerts"} => [{"alertname":"FlagErrors","first_seen":"14:02:11"}]`
	readSpecs   = `call mcp__srv__k8s_spec_change_analysis {"file":"/data/snap/7/objects.tsv"} => otel-demo/ConfigMap/flagd-config changed at 14:02:11`
)

// detCase is one case of a detector's table: the trace and the steps of
// each finding it must produce, in order (none for silence), optionally
// with the quote and confidence of the first.
type detCase struct {
	name  string
	trace *trace.Trace
	want  [][]int
	quote string  // the first finding's quote, when set
	conf  float64 // the first finding's confidence, when set
}

func runCases(t *testing.T, d *Detector, cases []detCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs, errs := Run(tc.trace, []*Detector{d})
			if len(errs) > 0 {
				t.Fatalf("rejected findings: %v", errs)
			}
			if len(fs) != len(tc.want) {
				t.Fatalf("got %d findings, want %d:\n%s", len(fs), len(tc.want), describe(fs))
			}
			for i, f := range fs {
				if f.Mode != d.Mode || f.Detector != d.Name || f.Source != Source || f.Verdict != trace.Present || f.Taxonomy == "" {
					t.Errorf("finding %d labels: %+v", i, f)
				}
				if f.Confidence <= 0 || f.Confidence > 1 || f.Explanation == "" {
					t.Errorf("finding %d: confidence %v, explanation %q", i, f.Confidence, f.Explanation)
				}
				if !slices.Equal(f.Steps, tc.want[i]) {
					t.Errorf("finding %d cites steps %v, want %v\n%s", i, f.Steps, tc.want[i], describe(fs))
				}
			}
			if len(fs) == 0 {
				return
			}
			if tc.quote != "" && fs[0].Quote != tc.quote {
				t.Errorf("quote %q, want %q", fs[0].Quote, tc.quote)
			}
			if tc.conf != 0 && fs[0].Confidence != tc.conf {
				t.Errorf("confidence %v, want %v", fs[0].Confidence, tc.conf)
			}
		})
	}
}

func describe(fs []trace.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s %v %.2f %q: %s\n", f.Detector, f.Steps, f.Confidence, f.Quote, f.Explanation)
	}
	return b.String()
}

func TestRunDropsFindingsWithBadEvidence(t *testing.T) {
	bad := &Detector{Name: "bad", Mode: "FM-1.1", Run: func(p *Pass) {
		p.Report(trace.Finding{Steps: []int{99}, Quote: "x"})
		p.Report(trace.Finding{Steps: []int{0}, Quote: "not in the step"})
		p.Report(trace.Finding{Steps: []int{0}, Quote: "hello   world"})
	}}
	tr := build("say hello world")
	fs, errs := Run(tr, []*Detector{bad})
	if len(fs) != 1 || len(errs) != 2 {
		t.Fatalf("kept %d, rejected %d; want 1 and 2 (%v)", len(fs), len(errs), errs)
	}
}

func TestReportRecordsTheTaxonomyOfTheCode(t *testing.T) {
	for code, want := range map[string]string{"FM-1.3": taxonomy.Version, "SYS-2": taxonomy.SystemVersion} {
		d := &Detector{Name: "d", Mode: code, Run: func(p *Pass) { p.Report(trace.Finding{Confidence: 0.123}) }}
		fs, _ := Run(build("say x"), []*Detector{d})
		if len(fs) != 1 || fs[0].Taxonomy != want || fs[0].Confidence != 0.12 {
			t.Errorf("%s: %+v, want taxonomy %s and confidence rounded to 0.12", code, fs, want)
		}
	}
}

func TestDetectorsAreDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range All {
		if seen[d.Name] {
			t.Errorf("duplicate detector %s", d.Name)
		}
		seen[d.Name] = true
		if _, _, ok := taxonomy.Lookup(d.Mode); !ok || d.Run == nil || !strings.Contains(d.Doc, "Blind spots:") {
			t.Errorf("detector %s is incomplete", d.Name)
		}
		if d.Name != strings.ToLower(d.Name) || strings.ContainsAny(d.Name, " _") {
			t.Errorf("detector name %q is not kebab-case", d.Name)
		}
		if !strings.HasSuffix(d.Summary(), ".") || strings.Contains(d.Summary(), "\n") {
			t.Errorf("detector %s: summary %q is not one sentence", d.Name, d.Summary())
		}
		if _, ok := Lookup(d.Name); !ok {
			t.Errorf("Lookup(%q) fails", d.Name)
		}
	}
}

// TestAgentBehaviourNeedsAnAgent pins the division of labour with SYS-1: on
// a run where the model never produced a step, only empty-model-response
// speaks, whatever else the run looks like.
func TestAgentBehaviourNeedsAnAgent(t *testing.T) {
	tr := build(zeroTask, "instr Write your diagnosis to: agent_output.json", "user Begin investigation",
		"nudge I don't see agent_output.json file.", "nudge I don't see agent_output.json file.",
		"nudge I don't see agent_output.json file.", "error turn_aborted turn aborted: interrupted")
	fs, errs := Run(tr, All)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(fs) != 1 || fs[0].Detector != EmptyModelResponse.Name {
		t.Fatalf("want only empty-model-response, got:\n%s", describe(fs))
	}
}
