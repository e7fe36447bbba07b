package guardproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/faultline/faultline/guard"
)

// streamAnswer rebuilds a streamed answer from its events.
type streamAnswer interface {
	// add takes one event of the stream, its lines as they came, and
	// reports whether it is the stream's last: the answer is observed
	// before it is passed on.
	add(event []byte) (last bool)
	// reply is the answer the events so far make; false when none came.
	reply() (reply, bool)
	// writeError writes an error as the API's stream event.
	writeError(w io.Writer, e apiErrorBody)
}

// stream handles a streamed request: the upstream's events reach the
// client as they arrive, while the answer is rebuilt from them and
// observed before the stream's last event (chat's "data: [DONE]", the
// Responses API's response.completed). The response's headers are gone by
// then, so its decisions are told in the stream: an annotation as a
// comment line, a block as an error event; an inject at a finish gate
// waits for the next request. It reports whether the model's stream began,
// the request as sent having reached it.
func (p *Proxy) stream(ctx context.Context, w http.ResponseWriter, r *http.Request, e *entry, req apiRequest, body []byte, ds []guard.Decision) (answered bool) {
	resp, err := p.send(ctx, r, body)
	if err != nil {
		p.upstreamFailed(w, r, err)
		return false
	}
	defer resp.Body.Close()
	ok := resp.StatusCode/100 == 2
	if media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ok && media != "text/event-stream" {
		p.upstreamFailed(w, r, fmt.Errorf("answered %s with a body that is not %s stream (Content-Type %q)", resp.Status, req.answerKind(), media))
		return false
	}
	copyHeaders(w.Header(), resp.Header)
	annotate(w.Header(), ds)
	w.WriteHeader(resp.StatusCode)
	if !ok {
		_, _ = io.Copy(w, resp.Body)
		return false
	}
	flush := http.NewResponseController(w).Flush
	acc := req.newStream()
	in := bufio.NewReader(resp.Body)
	done := false
	var event []byte
	for {
		line, err := in.ReadBytes('\n')
		event = append(event, line...)
		// An event ends at a blank line; it is passed on whole, once read.
		if len(event) > 0 && (len(bytes.TrimSpace(line)) == 0 || err != nil) {
			if acc.add(event) && !done {
				done = true
				p.streamEnd(w, e, req, acc)
			}
			if _, werr := w.Write(event); werr != nil {
				p.cfg.Log.Debug("client went away during a stream", "err", werr)
				return true
			}
			_ = flush()
			event = event[:0]
		}
		switch {
		case errors.Is(err, io.EOF):
			if !done {
				// An upstream that ends its stream without its last event.
				if _, some := acc.reply(); some {
					p.streamEnd(w, e, req, acc)
					_ = flush()
				}
			}
			return true
		case errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil:
			// Too late for a status: the client is told in the stream.
			acc.writeError(w, apiErrorBody{Type: "upstream_timeout", Message: fmt.Sprintf("upstream %s did not finish within %s", p.cfg.Upstream, p.cfg.Timeout)})
			_ = flush()
			return true
		case err != nil:
			p.cfg.Log.Warn("upstream stream broke off", "upstream", p.cfg.Upstream.String(), "err", err)
			return true
		}
	}
}

// streamEnd observes a streamed answer and writes its decisions into the
// stream.
func (p *Proxy) streamEnd(w io.Writer, e *entry, req apiRequest, acc streamAnswer) {
	rp, _ := acc.reply()
	t, err := req.turn(rp.out)
	var ds []guard.Decision
	if err == nil {
		ds, err = p.observe(e, t.steps, rp.tokens, t.finishing)
	}
	p.passed(e, rp, t)
	if err != nil {
		if !p.failsOpen(err, "guard failed over a streamed answer: refused", "guard failed over a streamed answer: passed on unguarded") {
			acc.writeError(w, guardError(err))
		}
		return
	}
	for _, d := range ds {
		if d.Action >= guard.Annotate {
			fmt.Fprintf(w, ": faultline-guard %s\n\n", describe(d))
		}
	}
	if d := e.ended(); d != nil {
		acc.writeError(w, blocked(d))
	}
}

// writeEvent writes an error as a chat stream's event.
func writeEvent(w io.Writer, e apiErrorBody) {
	raw, _ := json.Marshal(apiError{Error: e})
	fmt.Fprintf(w, "data: %s\n\n", raw)
}

// accumulator rebuilds a streamed message from its chunks' deltas:
// content, reasoning, and tool calls by index.
type accumulator struct {
	chunks    int
	content   strings.Builder
	reasoning strings.Builder
	calls     []*streamCall
	tokens    int
}

type streamCall struct {
	ID       string `json:"id,omitempty"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
}

// add takes one event of the stream: its data lines are chunks, but for
// the last, "data: [DONE]".
func (a *accumulator) add(event []byte) (last bool) {
	for line := range bytes.Lines(event) {
		data := bytes.TrimSpace(line)
		if string(data) == "data: [DONE]" || string(data) == "data:[DONE]" {
			last = true
			continue
		}
		a.chunk(data)
	}
	return last
}

func (a *accumulator) reply() (reply, bool) {
	return reply{out: a.message(), tokens: a.tokens}, a.chunks > 0
}

func (a *accumulator) writeError(w io.Writer, e apiErrorBody) { writeEvent(w, e) }

// chunk takes one line of the stream; what is not a chunk of the first
// choice (comments, other events, other choices) is passed over.
func (a *accumulator) chunk(line []byte) {
	payload, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return
	}
	var c chunk
	if json.Unmarshal(bytes.TrimSpace(payload), &c) != nil {
		return
	}
	a.chunks++
	if c.Usage != nil {
		a.tokens = c.Usage.TotalTokens
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		a.content.WriteString(ch.Delta.Content)
		a.reasoning.WriteString(ch.Delta.ReasoningContent)
		for _, tc := range ch.Delta.ToolCalls {
			if tc.Index < 0 || tc.Index > len(a.calls) {
				continue // a delta of a call whose start never came
			}
			if tc.Index == len(a.calls) {
				a.calls = append(a.calls, &streamCall{Type: "function"})
			}
			call := a.calls[tc.Index]
			if tc.ID != "" {
				call.ID = tc.ID
			}
			call.Function.Name += tc.Function.Name
			call.Function.Arguments += tc.Function.Arguments
		}
	}
}

// message is the message the chunks make, as a chat completion would
// carry it whole.
func (a *accumulator) message() json.RawMessage {
	m := struct {
		Role             string        `json:"role"`
		Content          string        `json:"content"`
		ReasoningContent string        `json:"reasoning_content,omitempty"`
		ToolCalls        []*streamCall `json:"tool_calls,omitempty"`
	}{"assistant", a.content.String(), a.reasoning.String(), a.calls}
	raw, _ := json.Marshal(m)
	return raw
}
