package trace

import (
	"strings"
	"testing"
)

func step(kind Kind, callID, text string) Step {
	return Step{Kind: kind, CallID: callID, Text: text, Tool: "t"}
}

func TestLink(t *testing.T) {
	tests := []struct {
		name     string
		steps    []Step
		pairs    map[int]int
		problems []string
	}{
		{"call then result", []Step{step(KindToolCall, "a", ""), step(KindToolResult, "a", "")}, map[int]int{0: 1, 1: 0}, nil},
		{"interleaved", []Step{step(KindToolCall, "a", ""), step(KindToolCall, "b", ""), step(KindToolResult, "b", ""), step(KindToolResult, "a", "")},
			map[int]int{0: 3, 1: 2, 2: 1, 3: 0}, nil},
		{"orphan result", []Step{step(KindToolResult, "x", "")}, map[int]int{}, []string{`step 0: tool result for call id "x" that has no call before it`}},
		{"call without result", []Step{step(KindToolCall, "y", "")}, map[int]int{}, []string{`step 0: tool call "t" (id "y") has no result`}},
		{"reused id pairs with the latest open call", []Step{step(KindToolCall, "a", ""), step(KindToolResult, "a", ""), step(KindToolCall, "a", ""), step(KindToolResult, "a", "")},
			map[int]int{0: 1, 1: 0, 2: 3, 3: 2}, nil},
		{"result before call", []Step{step(KindToolResult, "a", ""), step(KindToolCall, "a", "")}, map[int]int{}, []string{"no call before it", "has no result"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &Trace{ID: "x"}
			for _, s := range tt.steps {
				tr.Append(s)
			}
			problems := tr.Link()
			if len(problems) != len(tt.problems) {
				t.Fatalf("problems = %v, want %v", problems, tt.problems)
			}
			for i, p := range problems {
				if !strings.Contains(p.String(), tt.problems[i]) {
					t.Errorf("problem %q, want %q", p, tt.problems[i])
				}
			}
			for i := range tr.Steps {
				want, paired := tt.pairs[i]
				got := tr.Steps[i].Pair
				if paired != (got != nil) || (got != nil && *got != want) {
					t.Errorf("step %d pair = %v, want %v (%v)", i, got, want, paired)
				}
			}
			if p := tr.Validate(); len(p) > 0 {
				t.Errorf("linked trace invalid: %v", p)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tr := &Trace{}
	tr.Append(Step{Kind: KindMessage})
	tr.Append(Step{Kind: "weird"})
	tr.Steps[0].Index = 5
	one := 1
	tr.Steps[0].Pair = &one
	got := []string{}
	for _, p := range tr.Validate() {
		got = append(got, p.String())
	}
	want := []string{"trace has no id", "step 0: index is 5, want 0", "step 0: pair 1 does not point back", `step 1: unknown kind "weird"`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func TestCheckEvidence(t *testing.T) {
	tr := &Trace{ID: "x"}
	tr.Append(Step{Kind: KindMessage, Text: "the  cart\nservice is down"})
	tr.Append(Step{Kind: KindToolCall, Tool: "alert_summary", Args: `{"q": "cpu"}`})
	tests := []struct {
		f    Finding
		want string
	}{
		{Finding{Mode: "m", Steps: []int{0}, Quote: "cart service is"}, ""},
		{Finding{Mode: "m", Steps: []int{1}, Quote: `"q": "cpu"`}, ""},
		{Finding{Mode: "m", Steps: []int{1}, Quote: "alert_summary"}, ""},
		{Finding{Mode: "m", Steps: []int{0, 1}, Quote: "cpu"}, ""},
		{Finding{Mode: "m"}, ""},
		{Finding{Mode: "m", Steps: []int{2}}, "cites step 2, trace has 2 steps"},
		{Finding{Mode: "m", Steps: []int{-1}}, "cites step -1"},
		{Finding{Mode: "m", Quote: "cart"}, "cites no step"},
		{Finding{Mode: "m", Steps: []int{1}, Quote: "cart"}, "does not occur in steps [1]"},
	}
	for _, tt := range tests {
		err := tt.f.CheckEvidence(tr)
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%+v: err %v, want %q", tt.f, err, tt.want)
		}
	}
}

func TestPrimaryOutcome(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		outcomes []Outcome
		want     string
	}{
		{nil, ""},
		{[]Outcome{{Source: "itbench"}}, ""},
		{[]Outcome{{Source: "format", Success: &yes}, {Source: "itbench", Success: &no}}, "itbench"},
		{[]Outcome{{Source: "itbench", Success: &no}, {Source: "labels", Success: &yes}}, "labels"},
		{[]Outcome{{Source: "zz", Success: &no}, {Source: "aa", Success: &yes}}, "aa"},
	}
	for _, tt := range tests {
		got := PrimaryOutcome(tt.outcomes)
		name := ""
		if got != nil {
			name = got.Source
		}
		if name != tt.want {
			t.Errorf("PrimaryOutcome(%+v) = %q, want %q", tt.outcomes, name, tt.want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{{"hello", 10, "hello"}, {"hello", 3, "hel…"}, {"héllo", 2, "hé…"}, {"x", 0, ""}} {
		if got := Clip(tt.in, tt.n); got != tt.want {
			t.Errorf("Clip(%q,%d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
