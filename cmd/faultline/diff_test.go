package main

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// diff on two example runs of one incident (sim-alpha succeeded, sim-beta
// failed): the summary of each, the aligned rows in 100 columns, the JSON
// form, and the errors for ids it cannot use.
func TestDiff(t *testing.T) {
	c := newCLI(t)
	if _, errOut, code := c.run("", "analyze", "-q", examples); code != exitOK {
		t.Fatalf("analyze: exit %d %s", code, errOut)
	}
	const alpha, beta = "019c22bd-d098-7f47-9e7d-8a330f6ddd22", "019c27e4-2c98-703d-8ddf-4d5566cecce7"
	out, errOut, code := c.run("", "diff", "019c22bd", "019c27e4")
	if code != exitOK {
		t.Fatalf("diff: exit %d %s", code, errOut)
	}
	for _, want := range []string{
		"trace      " + alpha + "         " + beta + "\n",
		"model      sim-alpha                                    sim-beta\n",
		"outcome    success (root_cause_recall 1.00)             failure (root_cause_recall 0.00)\n",
		"steps      27, 9 tool calls                             30, 10 tool calls\n",
		"modes      none found                                   detector: FM-1.3\n",
		"Modes: only in B FM-1.3.\n",
		"    0 Begin investigation                        =     0 Begin investigation\n",
		"    6 ls -R …/101                                =     6 ls -R …/101\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff lacks %q:\n%s", want, out)
		}
	}
	for i, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > 100 {
			t.Errorf("line %d is %d columns wide: %q", i+1, n, line)
		}
	}

	out, _, code = c.run("", "diff", "--json", alpha, beta)
	var got struct {
		A, B struct {
			ID    string
			Steps int
		}
		Counts struct{ Exact, Similar, OnlyA, OnlyB int }
		Rows   []struct {
			Kind, Match string
			A, B        *struct {
				Call  *int
				Steps []int
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitOK {
		t.Fatalf("diff --json: exit %d, %v\n%s", code, err, out)
	}
	if got.A.ID != alpha || got.B.ID != beta || len(got.Rows) == 0 || got.Counts.Exact == 0 {
		t.Errorf("diff --json: %+v", got)
	}
	for _, r := range got.Rows {
		for _, side := range []struct {
			cell *struct {
				Call  *int
				Steps []int
			}
			steps int
		}{{r.A, got.A.Steps}, {r.B, got.B.Steps}} {
			if side.cell == nil {
				continue
			}
			for _, s := range side.cell.Steps {
				if s < 0 || s >= side.steps {
					t.Errorf("row %+v cites step %d of %d", r, s, side.steps)
				}
			}
			if (side.cell.Call != nil) != (r.Kind == "call") {
				t.Errorf("row %+v: a call only on call rows", r)
			}
		}
	}

	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown", []string{"diff", "nosuch", beta}, `diff A: trace "nosuch": not found`},
		{"ambiguous", []string{"diff", alpha, "019c2"}, `diff B: trace "019c2" is ambiguous: matches`},
		{"the same trace twice", []string{"diff", "019c22bd", alpha}, "A and B are the same trace, " + alpha},
		{"one id", []string{"diff", alpha}, "accepts 2 arg(s), received 1"},
	} {
		_, errOut, code := c.run("", tt.args...)
		if code != exitFailure || !strings.Contains(errOut, tt.want) {
			t.Errorf("%s: exit %d, %q; want exit %d and %q", tt.name, code, errOut, exitFailure, tt.want)
		}
	}
}
