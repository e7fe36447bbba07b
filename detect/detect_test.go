package detect

import (
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

// build makes a trace from a compact script: "call tool args => output",
// "say text", "nudge text", "user text".
func build(script ...string) *trace.Trace {
	t := &trace.Trace{ID: "t"}
	for n, line := range script {
		verb, rest, _ := strings.Cut(line, " ")
		switch verb {
		case "call":
			call, out, _ := strings.Cut(rest, " => ")
			tool, args, _ := strings.Cut(call, " ")
			id := "c" + string(rune('a'+n))
			t.Append(trace.Step{Kind: trace.KindToolCall, Role: trace.RoleAssistant, Tool: tool, Args: args, CallID: id})
			t.Append(trace.Step{Kind: trace.KindToolResult, Role: trace.RoleTool, Text: out, CallID: id})
		case "say":
			t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant, Text: rest})
		case "nudge":
			t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleHarness, Type: trace.TypeRetryNudge, Text: rest})
		case "user":
			t.Append(trace.Step{Kind: trace.KindMessage, Role: "user", Text: rest})
		}
	}
	t.Link()
	return t
}

func TestRepeatedToolCall(t *testing.T) {
	tests := []struct {
		name       string
		trace      *trace.Trace
		wantSteps  [][]int
		wantQuotes []string
	}{
		{"none", build(`call shell {"cmd":"ls"} => a`, `call shell {"cmd":"ls -l"} => a`), nil, nil},
		{"same call same output",
			build(`call shell {"cmd":"ls"} => a`, `say hm`, `call shell {"cmd": "ls"} => a`),
			[][]int{{0, 3}}, []string{`{"cmd":"ls"}`}},
		{"same call different output is not repetition",
			build(`call metric {"q":"cpu"} => 10`, `call metric {"q":"cpu"} => 12`), nil, nil},
		{"key order and whitespace do not matter",
			build(`call q {"a":1,"b":2} => x  y`, `call q {"b":2, "a":1} => x y`, `call q {"a":1,"b":2} => x y`),
			[][]int{{0, 2, 4}}, []string{`{"a":1,"b":2}`}},
		{"empty arguments quote the tool name",
			build(`call alert_summary {} => 3 alerts`, `call alert_summary {} => 3 alerts`),
			[][]int{{0, 2}}, []string{"alert_summary"}},
		{"two groups",
			build(`call a {} => 1`, `call b {} => 2`, `call a {} => 1`, `call b {} => 2`),
			[][]int{{0, 4}, {2, 6}}, []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, errs := Run(tt.trace, []*Detector{RepeatedToolCall})
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if len(fs) != len(tt.wantSteps) {
				t.Fatalf("got %d findings, want %d: %+v", len(fs), len(tt.wantSteps), fs)
			}
			for i, f := range fs {
				if f.Mode != "FM-1.3" || f.Source != Source || f.Detector != "repeated-tool-call" || f.Verdict != trace.Present {
					t.Errorf("finding labels = %+v", f)
				}
				if !slices.Equal(f.Steps, tt.wantSteps[i]) || f.Quote != tt.wantQuotes[i] {
					t.Errorf("finding %d: steps %v quote %q, want %v %q", i, f.Steps, f.Quote, tt.wantSteps[i], tt.wantQuotes[i])
				}
				if f.Confidence < 0.6 || f.Confidence > 0.95 {
					t.Errorf("confidence %v out of range", f.Confidence)
				}
			}
		})
	}
}

func TestHarnessRetryLoop(t *testing.T) {
	tests := []struct {
		name      string
		trace     *trace.Trace
		wantSteps []int
		minConf   float64
	}{
		{"no nudges", build(`user go`, `say done`), nil, 0},
		{"one nudge then the agent acts", build(`user go`, `nudge I don't see agent_output.json file.`, `call shell {} => ok`), nil, 0},
		{"one nudge and nothing after", build(`user go`, `nudge I don't see agent_output.json file.`), []int{1}, 0.8},
		{"five nudges, no tool calls", build(`user go`, `nudge I don't see agent_output.json file.`, `nudge I don't see agent_output.json file.`, `nudge I don't see agent_output.json file.`, `nudge I don't see agent_output.json file.`, `nudge I don't see agent_output.json file.`), []int{1, 2, 3, 4, 5}, 0.95},
		{"two nudges, recovered", build(`user go`, `nudge I don't see agent_output.json file.`, `say ok`, `nudge I don't see agent_output.json file.`, `call shell {} => written`), []int{1, 3}, 0.7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, errs := Run(tt.trace, []*Detector{HarnessRetryLoop})
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if tt.wantSteps == nil {
				if len(fs) != 0 {
					t.Fatalf("unexpected findings %+v", fs)
				}
				return
			}
			if len(fs) != 1 {
				t.Fatalf("got %d findings, want 1", len(fs))
			}
			f := fs[0]
			if !slices.Equal(f.Steps, tt.wantSteps) || f.Mode != "FM-1.5" || f.Confidence < tt.minConf || f.Quote != "I don't see agent_output.json file." {
				t.Errorf("got %+v", f)
			}
		})
	}
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

func TestDetectorsAreDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range All {
		if seen[d.Name] {
			t.Errorf("duplicate detector %s", d.Name)
		}
		seen[d.Name] = true
		if !strings.HasPrefix(d.Mode, "FM-") || d.Run == nil || !strings.Contains(d.Doc, "Blind spots:") {
			t.Errorf("detector %s is incomplete", d.Name)
		}
	}
}
