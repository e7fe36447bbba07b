package trace

import (
	"encoding/json"
	"testing"
)

// An outcome's detail that holds JSON is written as JSON, and read back as
// the same text; any other detail stays a string.
func TestOutcomeDetailJSON(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		detail, want string
	}{
		{`{"recall":1,"predictions":[{"entity":"x"}]}`, `{"source":"itbench","success":true,"detail":{"recall":1,"predictions":[{"entity":"x"}]}}`},
		{`ground truth: 42`, `{"source":"itbench","success":true,"detail":"ground truth: 42"}`},
		{`{not json`, `{"source":"itbench","success":true,"detail":"{not json"}`},
		{``, `{"source":"itbench","success":true}`},
	} {
		o := Outcome{Source: "itbench", Success: &yes, Detail: tc.detail}
		b, err := json.Marshal(o)
		if err != nil || string(b) != tc.want {
			t.Errorf("marshal %q: %s %v, want %s", tc.detail, b, err, tc.want)
			continue
		}
		var back Outcome
		if err := json.Unmarshal(b, &back); err != nil || back.Detail != tc.detail || back.Source != "itbench" || back.Success == nil {
			t.Errorf("round trip of %q: %+v %v", tc.detail, back, err)
		}
	}
}
