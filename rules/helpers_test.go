package rules

import (
	"testing"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/trace"
)

// mustParse parses a rule file held in a string, failing the test on an
// error.
func mustParse(tb testing.TB, src string) *Set {
	tb.Helper()
	s, err := Parse("r.yaml", []byte(src))
	if err != nil {
		tb.Fatalf("parse: %v\n%s", err, src)
	}
	return s
}

// build makes a trace of steps, numbering them and pairing each call with
// the result right after it.
func build(steps ...trace.Step) *trace.Trace {
	t := &trace.Trace{ID: "t"}
	for _, s := range steps {
		t.Append(s)
	}
	for i := range t.Steps {
		if t.Steps[i].Kind == trace.KindToolCall && i+1 < len(t.Steps) && t.Steps[i+1].Kind == trace.KindToolResult {
			call, result := i, i+1
			t.Steps[i].Pair, t.Steps[i+1].Pair = &result, &call
		}
	}
	return t
}

func call(tool, args string) trace.Step {
	return trace.Step{Kind: trace.KindToolCall, Role: trace.RoleAssistant, Tool: tool, Args: args}
}

func result(tool, text string, exit int) trace.Step {
	return trace.Step{Kind: trace.KindToolResult, Role: trace.RoleTool, Tool: tool, Text: text, ExitCode: &exit, IsError: exit != 0}
}

func msg(role, text string) trace.Step {
	return trace.Step{Kind: trace.KindMessage, Role: role, Text: text}
}

// run runs the set's only rule over t as the driver does, failing on a
// finding whose evidence does not check out.
func run(tb testing.TB, s *Set, t *trace.Trace) []trace.Finding {
	tb.Helper()
	fs, errs := detect.Run(t, s.Detectors())
	for _, err := range errs {
		tb.Errorf("rejected finding: %v", err)
	}
	return fs
}

// rule is a rule file of one rule with the given shape, written as YAML
// indented under the rule.
func rule(shape string) string {
	return "rules:\n  - name: r\n    mode: FM-1.3\n    doc: A test rule.\n" + indent(shape, "    ")
}

func indent(s, by string) string {
	out := ""
	for _, line := range splitLines(s) {
		if line == "" {
			out += "\n"
			continue
		}
		out += by + line + "\n"
	}
	return out
}

func splitLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			lines = append(lines, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

// shapeCase is one trace and the steps each finding should cite.
type shapeCase struct {
	name  string
	shape string
	trace *trace.Trace
	want  [][]int
}

func runShapeCases(t *testing.T, cases []shapeCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mustParse(t, rule(c.shape))
			fs := run(t, s, c.trace)
			var got [][]int
			for _, f := range fs {
				got = append(got, f.Steps)
				if f.Quote == "" || f.Explanation == "" {
					t.Errorf("finding without quote or explanation: %+v", f)
				}
				if f.Confidence != DefaultConfidence || f.Mode != "FM-1.3" || f.Detector != "r" {
					t.Errorf("finding fields: %+v", f)
				}
			}
			if !equalSteps(got, c.want) {
				t.Errorf("findings cite %v, want %v", got, c.want)
				for _, f := range fs {
					t.Logf("%s", f.Explanation)
				}
			}
		})
	}
}

func equalSteps(a, b [][]int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}
