package guardproxy

import (
	"bytes"
	"io"
	"testing"
)

// FuzzParsers feeds the proxy's readers what a client or an upstream might
// send: a request body of either API, the answer it gets, and the events of
// a stream. None may panic; what they accept maps to steps or an error.
func FuzzParsers(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"u"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}]}`),
		[]byte(`{"choices":[{"message":{"role":"assistant","content":"done"}}],"usage":{"total_tokens":3}}`),
		[]byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte(`{"model":"m","instructions":"i","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"u"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"r"}],"previous_response_id":"r1"}`),
		[]byte(`{"id":"r2","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"x"}]},{"type":"function_call","call_id":"d","name":"g","arguments":"{}"}],"usage":{"total_tokens":5}}`),
		[]byte("event: response.output_item.done\ndata: {\"item\":{\"type\":\"function_call\",\"call_id\":\"d\",\"name\":\"g\",\"arguments\":\"{}\"}}\n\nevent: response.completed\ndata: {\"response\":{\"id\":\"r2\",\"output\":[]}}\n\n"))
	f.Add([]byte(`{"input":"just text"}`), []byte(`{}`), []byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n\n"))
	f.Fuzz(func(t *testing.T, request, answer, stream []byte) {
		for _, parse := range []func([]byte) (apiRequest, error){parseChat, parseResponses} {
			req, err := parse(request)
			if err != nil {
				continue
			}
			req.start()
			if _, err := req.body([]byte(`{"role":"system","content":"x"}`)); err != nil {
				continue
			}
			if rp, err := req.reply(answer); err == nil {
				_, _ = req.turn(rp.out)
			}
			acc := req.newStream()
			for _, event := range bytes.Split(stream, []byte("\n\n")) {
				if acc.add(event) {
					break
				}
			}
			if rp, ok := acc.reply(); ok {
				_, _ = req.turn(rp.out)
			}
			acc.writeError(io.Discard, apiErrorBody{})
		}
	})
}
