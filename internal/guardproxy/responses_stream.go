package guardproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// responseStream rebuilds a streamed Responses API answer from its events:
// the items of response.output_item.done, in place of which the response
// of response.completed (or response.incomplete), when it holds its
// output, is read whole.
type responseStream struct {
	items []json.RawMessage
	// final is the response of the stream's last event, once it came.
	final  *response
	id     string
	failed bool
}

// streamEvent is the part of a Responses API stream event the guard reads.
type streamEvent struct {
	Type     string          `json:"type"`
	Item     json.RawMessage `json:"item"`
	Response *response       `json:"response"`
}

// add takes one event; its data lines make one JSON object, as the SSE
// format joins them.
func (s *responseStream) add(event []byte) (last bool) {
	var data [][]byte
	for line := range bytes.Lines(event) {
		if payload, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(payload, []byte(" ")))
		}
	}
	var ev streamEvent
	if len(data) == 0 || json.Unmarshal(bytes.Join(data, []byte("\n")), &ev) != nil {
		return false
	}
	if ev.Response != nil && ev.Response.ID != "" {
		s.id = ev.Response.ID
	}
	switch ev.Type {
	case "response.output_item.done":
		if len(ev.Item) > 0 {
			s.items = append(s.items, ev.Item)
		}
	case "response.completed", "response.incomplete":
		s.final = ev.Response
		return true
	case "response.failed", "error":
		// The model gave no answer to observe; the client is told by the
		// event itself.
		s.failed = true
	}
	return false
}

func (s *responseStream) reply() (reply, bool) {
	var rp reply
	if s.final != nil {
		rp = s.final.reply()
	}
	if rp.id == "" {
		rp.id = s.id
	}
	if out := string(rp.out); out == "" || out == "null" || out == "[]" {
		// A last event without the output: the items as they came.
		rp.out, _ = json.Marshal(s.items)
	}
	return rp, !s.failed && (s.final != nil || len(s.items) > 0)
}

// writeError writes an error as the Responses API's error event, with the
// error also under "error", where OpenAI's client libraries look for one
// in a stream.
func (s *responseStream) writeError(w io.Writer, e apiErrorBody) {
	raw, _ := json.Marshal(struct {
		Type    string       `json:"type"`
		Code    string       `json:"code,omitempty"`
		Message string       `json:"message"`
		Error   apiErrorBody `json:"error"`
	}{"error", e.Code, e.Message, e})
	fmt.Fprintf(w, "event: error\ndata: %s\n\n", raw)
}
