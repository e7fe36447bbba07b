package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/store"
)

// StepPicker reads a few chosen steps of many traces.
type StepPicker interface {
	PickSteps(ctx context.Context, ids []string, p store.StepPick, fn func(store.PickedSteps) error) error
}

// TestPickSteps holds a backend's PickSteps to the fixture's answer.
func TestPickSteps(t *testing.T, open Opener) {
	st := openFilled(t, open)
	r, ok := st.(StepPicker)
	if !ok {
		t.Fatalf("a %T does not pick steps", st)
	}
	CheckPickSteps(t, r)
}

// CheckPickSteps checks what a reader holding the fixture cohort picks:
// failed results, the last tool call, the last step and a step named by
// index, each once, in order, cut to a number of characters (not bytes:
// "café" stays whole), for the traces asked about that exist, in the
// order asked, each once.
func CheckPickSteps(t *testing.T, r StepPicker) {
	t.Helper()
	pick := store.StepPick{Failed: true, LastCalls: 1, Last: true, TextLimit: 25, At: func(id string) []int {
		if id == "trace-c" {
			return []int{1, 99, 4}
		}
		return nil
	}}
	var got []string
	err := r.PickSteps(context.Background(), []string{"trace-d", "trace-a", "zz", "trace-c", "trace-b", "trace-d"}, pick, func(p store.PickedSteps) error {
		var steps []string
		for _, s := range p.Steps {
			exit := "-"
			if s.ExitCode != nil {
				exit = fmt.Sprint(*s.ExitCode)
			}
			steps = append(steps, fmt.Sprintf("%d %s %s %s %v %q %q", s.Index, s.Kind, s.Tool, exit, s.IsError, s.Text, s.Args))
		}
		got = append(got, p.ID+": "+strings.Join(steps, "; "))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`trace-d: 1 message  - false "looking at step b" ""`,
		`trace-a: 3 tool_call shell - false "" "{\"cmd\":\"kubectl logs café"; ` +
			`4 tool_result shell 1 true "Error: agent_output.json " ""; 7 message  - false "looking at step h" ""`,
		`trace-c: 1 message  - false "looking at step b" ""; 4 message  - false "looking at step e" ""`,
		`trace-b: 2 message  - false "looking at step c" ""`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("picked:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
