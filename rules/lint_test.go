package rules

import (
	"fmt"
	"testing"
)

func TestLint(t *testing.T) {
	s := mustParse(t, `rules:
  - name: a
    mode: FM-1.3
    doc: A rule.
    repeat:
      match:
        tool: [shel, apply_patch]
        not:
          tool: update_plan_x
      same: [args]
      times: 2
  - name: b
    mode: FM-1.3
    doc: B rule.
    sequence:
      first: {tool: kubectl}
      then:
        tool: exec_command
      within: 3
`)
	tools := map[string]int{"shell": 40, "sh": 2, "apply_patch": 3, "update_plan": 9, "exec": 1}
	var got []string
	for _, err := range s.Lint(tools) {
		got = append(got, err.Error())
	}
	want := []string{
		`r.yaml:7: rule a: tool "shel" never occurs in the traces (did you mean "shell"?)`,
		`r.yaml:16: rule b: tool "kubectl" never occurs in the traces`,
		`r.yaml:18: rule b: tool "exec_command" never occurs in the traces`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Lint:\n%q\nwant\n%q", got, want)
	}
	if errs := s.Lint(map[string]int{"shel": 1, "apply_patch": 1, "kubectl": 1, "exec_command": 1}); len(errs) != 0 {
		t.Errorf("Lint of a corpus with every tool: %v", errs)
	}
}
