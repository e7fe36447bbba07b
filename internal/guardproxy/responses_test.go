package guardproxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/guard"
	"github.com/faultline/faultline/trace"
)

// outputItem is a response's output item: a message's text, or
// "call:NAME" for a function call.
func outputItem(content string) map[string]any {
	if name, ok := strings.CutPrefix(content, "call:"); ok {
		return map[string]any{"type": "function_call", "id": "fc-" + name, "call_id": "c-" + name, "name": name, "arguments": `{"x": 1}`, "status": "completed"}
	}
	return map[string]any{"type": "message", "id": "msg-1", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": content, "annotations": []any{}}}}
}

func responseObject(n int, content string) map[string]any {
	return map[string]any{
		"id": fmt.Sprintf("resp_%d", n), "object": "response", "status": "completed",
		"output": []any{map[string]any{"type": "reasoning", "id": "rs-1", "summary": []any{map[string]any{"type": "summary_text", "text": "thinking it over"}}}, outputItem(content)},
		"usage":  map[string]any{"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
	}
}

// responsesAnswers answers the n-th call with the n-th of contents (the
// last once they run out), as response resp_n.
func responsesAnswers(contents ...string) func(n int, w http.ResponseWriter, r *http.Request) {
	return func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		raw, _ := json.Marshal(responseObject(n, contents[min(n, len(contents)-1)]))
		_, _ = w.Write(raw)
	}
}

// responsesRequestBody is a Responses API request's body of the fields
// given, and the model.
func responsesRequestBody(fields map[string]any) string {
	fields["model"] = "test-model"
	raw, _ := json.Marshal(fields)
	return string(raw)
}

func postResponses(t *testing.T, url string, fields map[string]any, header ...string) (*http.Response, string) {
	t.Helper()
	return postTo(t, url+ResponsesPath, responsesRequestBody(fields), header...)
}

// sentInput is the input items the upstream's n-th request carried.
func sentInput(t *testing.T, up *fakeUpstream, n int) []map[string]any {
	t.Helper()
	var sent struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal([]byte(up.body(n)), &sent); err != nil {
		t.Fatalf("request %d: %v: %s", n, err, up.body(n))
	}
	return sent.Input
}

func TestGuardResponsesAnnotate(t *testing.T) {
	up := newUpstream(t, responsesAnswers("on it"))
	rule := &guard.Rule{Name: "ambiguous", Mode: "FM-2.2", Signals: []*regexp.Regexp{regexp.MustCompile(`either`)}, Action: guard.Annotate}
	p, srv := startProxy(t, up.URL, Config{Policy: policy(rule)})
	resp, body := postResponses(t, srv.URL, map[string]any{"instructions": "you fix things", "input": "fix either a or b"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if got, want := resp.Header.Get(GuardHeader), "rule=ambiguous mode=FM-2.2 action=annotate"; got != want {
		t.Errorf("%s = %q, want %q", GuardHeader, got, want)
	}
	want, _ := json.Marshal(responseObject(0, "on it"))
	if body != string(want) {
		t.Errorf("body %s, want the upstream's", body)
	}
	var kinds []string
	for _, s := range p.sessions.all()[0].s.Steps() {
		kinds = append(kinds, string(s.Kind)+":"+s.Text)
	}
	if got := strings.Join(kinds, "|"); got != "system:you fix things|message:fix either a or b|reasoning:thinking it over|message:on it" {
		t.Errorf("steps %s, want the instructions, the input, the reasoning summary and the answer", got)
	}
}

func TestGuardResponsesChainAndInject(t *testing.T) {
	up := newUpstream(t, responsesAnswers("call:loop", "fine"))
	rule := &guard.Rule{Name: "loop", Mode: "FM-1.3", Detectors: []*detect.Detector{toolDetector("loop", false)}, Action: guard.Inject, Message: "stop looping"}
	p, srv := startProxy(t, up.URL, Config{Policy: policy(rule)})
	resp, body := postResponses(t, srv.URL, map[string]any{"instructions": "you fix things", "input": []any{
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": "go"}}},
	}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get(GuardHeader), "action=inject") {
		t.Fatalf("first answer: status %d, %s %q: %s", resp.StatusCode, GuardHeader, resp.Header.Get(GuardHeader), body)
	}
	// The next request carries only the call's output, after the answer.
	resp, body = postResponses(t, srv.URL, map[string]any{"instructions": "you fix things", "previous_response_id": "resp_0", "input": []any{
		map[string]any{"type": "function_call_output", "call_id": "c-loop", "output": "same as before"},
	}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("second answer: status %d: %s", resp.StatusCode, body)
	}
	in := sentInput(t, up, 1)
	if len(in) != 2 || in[0]["type"] != "function_call_output" || in[1]["role"] != "system" || in[1]["content"] != injectPrefix+"stop looping" {
		t.Errorf("second request forwarded with input %v, want the call's output and the injection", in)
	}
	all := p.sessions.all()
	if len(all) != 1 {
		t.Fatalf("%d sessions, want the chain's one", len(all))
	}
	e := all[0]
	var kinds []string
	for _, s := range e.s.Steps() {
		kinds = append(kinds, string(s.Kind))
	}
	// The instructions, resent, are held once.
	if got := strings.Join(kinds, ","); e.gen != 1 || e.response != "resp_1" || got != "system,message,reasoning,tool_call,tool_result,reasoning,message" {
		t.Errorf("run %d after %s of steps %s; want run 1 after resp_1 of each step once", e.gen, e.response, got)
	}
	if r := e.s.Steps()[4]; r.Pair == nil || *r.Pair != 3 {
		t.Errorf("the call's output %+v is not paired with its call", r)
	}
	// A request after an earlier answer branches off: a new run.
	postResponses(t, srv.URL, map[string]any{"previous_response_id": "resp_0", "input": "try another way"}, SessionHeader, e.key)
	if e.gen != 2 || p.Stats().StartedOver != 1 {
		t.Errorf("after a branch: run %d, %d started over; want run 2", e.gen, p.Stats().StartedOver)
	}
}

func TestGuardResponsesFinishGateAsksAgain(t *testing.T) {
	up := newUpstream(t, responsesAnswers("done", "checked and done"))
	rule := &guard.Rule{Name: "verify", Mode: "FM-3.2", Detectors: []*detect.Detector{finishDetector()}, AtFinish: true, Action: guard.Inject, Message: "check it", MaxFires: 1}
	_, srv := startProxy(t, up.URL, Config{Policy: policy(rule)})
	resp, body := postResponses(t, srv.URL, map[string]any{"input": "fix it"})
	if resp.StatusCode != http.StatusOK || up.calls() != 2 || !strings.Contains(body, "checked and done") {
		t.Fatalf("status %d, upstream called %d times, client got %s; want the answer asked again", resp.StatusCode, up.calls(), body)
	}
	in := sentInput(t, up, 1)
	if len(in) != 3 || in[0]["role"] != "user" || in[1]["type"] != "message" || in[1]["role"] != "assistant" || in[2]["content"] != injectPrefix+"check it" {
		t.Errorf("asked again with input %v; want the user's message, the answer (its reasoning left out) and the corrective message", in)
	}
}

func TestGuardResponsesBlock(t *testing.T) {
	up := newUpstream(t, responsesAnswers("call:x"))
	rule := &guard.Rule{Name: "budget", Mode: "FM-1.5", Budget: &guard.Budget{Steps: 3, WarnAt: 1}, Action: guard.Block, Message: "over budget"}
	_, srv := startProxy(t, up.URL, Config{Policy: policy(rule)})
	for i, fields := range []map[string]any{
		{"instructions": "s", "input": "go"},
		// The chain's next request belongs to the blocked session.
		{"previous_response_id": "resp_0", "input": []any{map[string]any{"type": "function_call_output", "call_id": "c-x", "output": "ok"}}},
	} {
		resp, body := postResponses(t, srv.URL, fields)
		var e apiError
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			t.Fatalf("request %d: %v: %s", i, err, body)
		}
		if resp.StatusCode != http.StatusForbidden || e.Error.Type != "faultline_guard" || e.Error.Message != "over budget" || e.Error.Code != "budget" {
			t.Errorf("request %d: status %d, error %+v; want 403 faultline_guard over budget", i, resp.StatusCode, e.Error)
		}
	}
	if up.calls() != 1 {
		t.Errorf("upstream called %d times, want once", up.calls())
	}
}

// streamedResponse streams a response calling the tool loop, holding all
// but its first event until release is closed. With whole, its
// response.completed carries the output; without, the client has it from
// response.output_item.done alone.
func streamedResponse(release <-chan struct{}, whole bool) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		event := func(v map[string]any) {
			raw, _ := json.Marshal(v)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], raw)
			w.(http.Flusher).Flush()
		}
		event(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_s", "status": "in_progress", "output": []any{}}})
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		call := outputItem("call:loop")
		event(map[string]any{"type": "response.output_item.added", "output_index": 0, "item": call})
		event(map[string]any{"type": "response.function_call_arguments.delta", "output_index": 0, "delta": `{"x": 1}`})
		event(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": call})
		done := map[string]any{"id": "resp_s", "status": "completed", "usage": map[string]any{"total_tokens": 42}}
		if whole {
			done["output"] = []any{call}
		}
		event(map[string]any{"type": "response.completed", "response": done})
	}
}

// readResponsesStream posts a streamed request, closes release once the
// first event arrived, and returns the lines of the stream.
func readResponsesStream(t *testing.T, url string, release chan struct{}) []string {
	t.Helper()
	body := responsesRequestBody(map[string]any{"stream": true, "instructions": "s", "input": "go"})
	_, lines := readEvents(t, url+ResponsesPath, body, release, "response.created")
	return lines
}

func TestGuardResponsesStreamPassesEventsAndObserves(t *testing.T) {
	for _, whole := range []bool{true, false} {
		t.Run(fmt.Sprintf("output in response.completed %v", whole), func(t *testing.T) {
			release := make(chan struct{})
			up := newUpstream(t, streamedResponse(release, whole))
			rule := &guard.Rule{Name: "loop", Mode: "FM-1.3", Detectors: []*detect.Detector{toolDetector("loop", false)}, Action: guard.Annotate}
			p, srv := startProxy(t, up.URL, Config{Policy: policy(rule)})
			lines := readResponsesStream(t, srv.URL, release)
			comment := slicesIndex(lines, ": faultline-guard rule=loop mode=FM-1.3 action=annotate")
			completed := slicesIndex(lines, "event: response.completed")
			if comment < 0 || completed < comment || !strings.Contains(strings.Join(lines, "\n"), "response.function_call_arguments.delta") {
				t.Errorf("stream %q: want every event, the annotation before response.completed", lines)
			}
			e := p.sessions.all()[0]
			steps := e.s.Steps()
			last := steps[len(steps)-1]
			if last.Kind != trace.KindToolCall || last.Tool != "loop" || last.Args != `{"x": 1}` || last.CallID != "c-loop" || e.response != "resp_s" {
				t.Errorf("last step %+v after %q, want the call, after resp_s", last, e.response)
			}
		})
	}
}

func TestGuardResponsesStreamBlock(t *testing.T) {
	release := make(chan struct{})
	up := newUpstream(t, streamedResponse(release, true))
	rule := &guard.Rule{Name: "budget", Mode: "FM-1.5", Budget: &guard.Budget{Steps: 3, WarnAt: 1}, Action: guard.Block, Message: "over budget"}
	_, srv := startProxy(t, up.URL, Config{Policy: policy(rule)})
	lines := readResponsesStream(t, srv.URL, release)
	errAt := slicesIndex(lines, "event: error")
	if completed := slicesIndex(lines, "event: response.completed"); errAt < 0 || completed < errAt || !strings.Contains(lines[errAt+1], `"over budget"`) {
		t.Errorf("stream %q: want an error event before response.completed", lines)
	}
}

func TestGuardResponsesNotAResponse(t *testing.T) {
	up := newUpstream(t, func(_ int, w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hello") })
	_, srv := startProxy(t, up.URL, Config{Policy: policy()})
	for _, stream := range []bool{false, true} {
		resp, body := postResponses(t, srv.URL, map[string]any{"input": "go", "stream": stream})
		if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "not a response") {
			t.Errorf("stream %v: status %d %s, want 502 saying it is not a response", stream, resp.StatusCode, body)
		}
	}
}
