package ingest

import (
	"encoding/json"
	"testing"

	"github.com/faultline/faultline/trace"
)

func TestChatSteps(t *testing.T) {
	tests := []struct {
		name     string
		messages string
		kinds    []trace.Kind
		err      bool
	}{
		{"a turn with a tool call and its result",
			`[{"role": "system", "content": "be brief"}, {"role": "user", "content": "list pods"},
			  {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "kubectl", "arguments": "{\"cmd\": \"get pods\"}"}}]},
			  {"role": "tool", "tool_call_id": "c1", "content": "pod-a Running"},
			  {"role": "assistant", "content": "pod-a runs"}]`,
			[]trace.Kind{trace.KindSystem, trace.KindMessage, trace.KindToolCall, trace.KindToolResult, trace.KindMessage}, false},
		{"not a list", `{"role": "user"}`, nil, true},
		{"a message that is not an object", `[{"role": "user", "content": "a"}, 3]`, nil, true},
	}
	for _, tt := range tests {
		steps, err := ChatSteps(json.RawMessage(tt.messages))
		if (err != nil) != tt.err {
			t.Errorf("%s: err = %v, want error %v", tt.name, err, tt.err)
			continue
		}
		var kinds []trace.Kind
		for i, s := range steps {
			if s.Index != i {
				t.Errorf("%s: step %d has index %d", tt.name, i, s.Index)
			}
			kinds = append(kinds, s.Kind)
		}
		if len(kinds) != len(tt.kinds) {
			t.Fatalf("%s: kinds %v, want %v", tt.name, kinds, tt.kinds)
		}
		for i := range kinds {
			if kinds[i] != tt.kinds[i] {
				t.Errorf("%s: kinds %v, want %v", tt.name, kinds, tt.kinds)
				break
			}
		}
		if tt.err || len(steps) < 4 {
			continue
		}
		if call, res := steps[2], steps[3]; call.Tool != "kubectl" || call.CallID != "c1" || res.CallID != "c1" || res.Pair != nil {
			t.Errorf("%s: call %+v result %+v: want kubectl c1, unpaired", tt.name, call, res)
		}
	}
}
