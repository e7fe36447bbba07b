package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/faultline/faultline/detect"
)

func TestModesCommand(t *testing.T) {
	c := newCLI(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"list", []string{"modes"}, exitOK, []string{"FM-1.1", "Disobey task specification", "FM-3.3", "SYS-4", "Repeated-call detection"}},
		{"one, short code", []string{"modes", "1.3"}, exitOK, []string{"FM-1.3  Step repetition", "Definition: Work that was", "Example:", "repeated-tool-call", "Intervention: Repeated-call detection"}},
		{"no detector", []string{"modes", "fm-2.4"}, exitOK, []string{"Detectors: none; the LLM judge"}},
		{"system", []string{"modes", "SYS-1"}, exitOK, []string{"Empty model response", "Model endpoint health check"}},
		{"unknown", []string{"modes", "FM-9.9"}, exitFailure, []string{`no mode "FM-9.9"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := c.run("", tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("output lacks %q:\n%s%s", w, out, errOut)
				}
			}
		})
	}
}

// Every mode comes with an example and an intervention, and every detector
// is listed under the mode it reports.
func TestModesJSON(t *testing.T) {
	out, _, code := newCLI(t).run("", "modes", "--json")
	if code != exitOK {
		t.Fatal(code)
	}
	var modes []modeJSON
	if err := json.Unmarshal([]byte(out), &modes); err != nil {
		t.Fatal(err)
	}
	if len(modes) != 18 {
		t.Errorf("%d modes, want 14 MAST and 4 system", len(modes))
	}
	listed := map[string]string{}
	for _, m := range modes {
		if m.Example == "" || m.Definition == "" || m.Intervention.Name == "" || m.CategoryName == "" {
			t.Errorf("%s is missing a field: %+v", m.Code, m)
		}
		for _, d := range m.Detectors {
			listed[d.Name] = m.Code
		}
	}
	for _, d := range detect.All {
		if listed[d.Name] != d.Mode {
			t.Errorf("detector %s listed under %q, want %s", d.Name, listed[d.Name], d.Mode)
		}
	}
}
