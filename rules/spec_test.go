package rules

import (
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestSpecRoundTrip(t *testing.T) {
	no := false
	specs := []Spec{
		newSpec("a"),
		{Name: "b", Mode: "FM-1.3", Doc: "B.", Severity: "high", Confidence: 0.5, Repeat: &Repeat{
			Match: &Matcher{Role: List{"assistant"}, ByAgent: &no, Exit: &Exit{Codes: []int{1, 2}}, Not: &Matcher{Agent: List{"x"}}},
			Same:  List{"tool", "args"}, Times: 3}},
		{Name: "c", Mode: "SYS-1", Doc: "C.", Sequence: &Sequence{First: &Matcher{Any: "a|b"}, Then: &Matcher{Exit: &Exit{Zero: true}}, Within: 4}},
		{Name: "d", Mode: "FM-3.2", Doc: "D.", NeverFollowed: &NeverFollowed{First: &Matcher{Exit: &Exit{Codes: []int{7}}}, By: &Matcher{Text: "ok"}}},
		{Name: "e", Mode: "FM-1.5", Doc: "E.", Count: &Count{Match: &Matcher{Kind: List{"message"}}, AtLeast: 2}},
		{Name: "f", Mode: "FM-1.5", Doc: "F.", Budget: &Budget{Tokens: 10}},
	}
	for _, sp := range specs {
		data, err := yaml.Marshal(sp)
		if err != nil {
			t.Fatal(err)
		}
		var back Spec
		if err := yaml.Unmarshal(data, &back); err != nil {
			t.Fatalf("%s: %v\n%s", sp.Name, err, data)
		}
		if !reflect.DeepEqual(back, sp) {
			t.Errorf("%s: read back as %+v\n%s", sp.Name, back, data)
		}
		// What marshals is a rule the loader takes, of the same shape.
		s := mustParse(t, "rules:\n"+indent("- "+strings.ReplaceAll(strings.TrimSpace(string(data)), "\n", "\n  "), "  "))
		if got := s.Rules[0].Shape(); got != sp.Shape() || got == "" {
			t.Errorf("%s: shape %q, want %q", sp.Name, got, sp.Shape())
		}
	}
	var e Exit
	if err := yaml.Unmarshal([]byte("often"), &e); err == nil {
		t.Error("exit: often accepted")
	}
}

func TestExitHolds(t *testing.T) {
	for _, tt := range []struct {
		e    Exit
		code int
		want bool
	}{
		{Exit{NonZero: true}, 1, true}, {Exit{NonZero: true}, 0, false},
		{Exit{Zero: true}, 0, true}, {Exit{Zero: true}, 2, false},
		{Exit{Codes: []int{1, 124}}, 124, true}, {Exit{Codes: []int{1, 124}}, 2, false},
	} {
		if got := tt.e.Holds(tt.code); got != tt.want {
			t.Errorf("%v.Holds(%d) = %v", tt.e, tt.code, got)
		}
	}
}
