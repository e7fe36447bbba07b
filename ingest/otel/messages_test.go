package otel

import (
	"testing"

	"github.com/faultline/faultline/internal/jsonscan"
	"github.com/faultline/faultline/internal/jsonscan/jsonscantest"
)

// messageCases are message lists whose reading differs between a naive
// scanner and encoding/json, which the scanner reads or leaves to it.
var messageCases = []string{
	`[{"role":"user","parts":[{"type":"text","content":"why is\n\"checkout\" down?"}]},{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"kubectl","arguments":{"args":["get","pods"]}}]}]`,
	`[{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":"CrashLoopBackOff"}]}]`,
	`[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{\"p\":1}"}}]}]`,
	`[{"role":"assistant","tool_calls":[{"id":"c1","custom":{"name":"ls","input":"x"}}]}]`, // left to encoding/json
	`[{"role":"assistant","function_call":{"name":"ls","arguments":"{}"}}]`,
	`[{"role":"assistant","tool_calls":[{"id":"a"}],"tool_calls":[{"name":"b"}]}]`, // the second into the first
	`[{"role":"user","parts":[{"type":"text"}],"parts":[{"content":"x"}]}]`,
	`[{"role":"user","parts":null,"parts":[{"type":"text","content":"x"}]}]`,
	`[{"Role":"user","PARTS":[{"TYPE":"text","Content":"x"}]}]`, // keys in another case
	`[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"}]}]`,
	`[{"role":"tool","tool_call_id":"c1","content":"out","function":"ls","error":{"message":"x"}}]`,
	`[{"role":"assistant","reasoning_content":"hm","reasoning":"r","refusal":"no","name":"bot"}]`,
	`[null,{"role":"user","parts":[null]},{"role":"assistant","tool_calls":[null]}]`,
	`[{"role":5}]`, `[{"role":"user","parts":{}}]`, `[{"role":"user"},]`, `[]`, `null`,
	`{"role":"user","content":"one message"}`,
	`[{"role":"user","parts":[{"type":"text","content":"\ud83d\ude00 \u00e9 \/"}],"extra":{"k":[1,2,{"x":null}]}}]`,
}

func FuzzMessageScan(f *testing.F) {
	for _, c := range messageCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		jsonscantest.Check[jsonMessages](t, doc)
		jsonscantest.Check[jsonMessage](t, doc)
		jsonscantest.FallsBack[jsonMessages](t, doc)
	})
}

// TestMessageScanReadsCommonShapes checks that the shapes spans carry are
// read in one pass, not left to encoding/json.
func TestMessageScanReadsCommonShapes(t *testing.T) {
	for _, c := range messageCases[:3] {
		var list jsonMessages
		var s jsonscan.Scanner
		s.Reset([]byte(c))
		if !list.Scan(&s) || !s.End() || len(list) == 0 {
			t.Errorf("left to encoding/json: %s", c)
		}
	}
}
