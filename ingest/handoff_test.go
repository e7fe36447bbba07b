package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

// orderSink records the traces it takes, refusing or failing on the ids
// it is told to.
type orderSink struct {
	got            []string
	refuse, failOn string
	closed         bool
}

func (s *orderSink) Trace(_ context.Context, t *trace.Trace) error {
	if s.closed {
		return errors.New("trace after close")
	}
	s.got = append(s.got, t.ID)
	switch t.ID {
	case s.refuse:
		return fmt.Errorf("%w: %s", ErrRefused, t.ID)
	case s.failOn:
		return errors.New("disk full")
	}
	return nil
}

func (s *orderSink) Close(context.Context, FileResult) error {
	s.closed = true
	return nil
}

func TestHandoff(t *testing.T) {
	big := strings.Repeat("x", handoffMax+1)
	tests := []struct {
		name            string
		ids             []string
		large           map[string]bool
		refuse, failOn  string
		wantGot         string
		wantErr         bool
		traces, refuse2 int
	}{
		{name: "in order", ids: []string{"a", "b", "c", "d"}, wantGot: "a b c d", traces: 4},
		{name: "a large trace waits its turn", ids: []string{"a", "b", "L", "c"}, large: map[string]bool{"L": true}, wantGot: "a b L c", traces: 4},
		{name: "a refusal declines one", ids: []string{"a", "b", "c"}, refuse: "b", wantGot: "a b c", traces: 2, refuse2: 1},
		{name: "an error stops the file", ids: []string{"a", "b", "c", "d", "e", "f"}, failOn: "b", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &walker{}
			var issues []Issue
			w.opts.Report = func(i Issue) { issues = append(issues, i) }
			sink := &orderSink{refuse: tt.refuse, failOn: tt.failOn}
			h := w.handoff(context.Background(), sink, "f.jsonl")
			var stopped error
			for _, id := range tt.ids {
				tr := &trace.Trace{ID: id}
				if tt.large[id] {
					tr.Steps = []trace.Step{{Text: big}}
				}
				if stopped = h.trace(tr); stopped != nil {
					break
				}
			}
			err := h.wait()
			if stopped == nil {
				stopped = err
			}
			if tt.wantErr {
				if stopped == nil || !strings.Contains(stopped.Error(), "disk full") {
					t.Fatalf("error %v", stopped)
				}
				// The file stops within a trace or two of the failure,
				// and nothing after it is stored once it has failed.
				if got := strings.Join(sink.got, " "); !strings.HasPrefix(got, "a b") || len(sink.got) > 2 {
					t.Errorf("stored %q", got)
				}
				return
			}
			if stopped != nil {
				t.Fatal(stopped)
			}
			if got := strings.Join(sink.got, " "); got != tt.wantGot {
				t.Errorf("stored %q, want %q", got, tt.wantGot)
			}
			if w.sum.Traces != tt.traces || w.sum.Refused != tt.refuse2 || len(issues) != tt.refuse2 {
				t.Errorf("traces %d, refused %d, issues %v", w.sum.Traces, w.sum.Refused, issues)
			}
		})
	}
}

func TestHandoffCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	block := make(chan struct{})
	sink := &blockingSink{release: block}
	h := (&walker{}).handoff(ctx, sink, "f.jsonl")
	// The first is being stored, the second waits: the third cannot be
	// handed over, and cancelling ends the wait for room.
	for _, id := range []string{"a", "b"} {
		if err := h.trace(&trace.Trace{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	if err := h.trace(&trace.Trace{ID: "c"}); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v", err)
	}
	close(block)
	if err := h.wait(); err != nil {
		t.Errorf("wait: %v", err)
	}
}

type blockingSink struct{ release chan struct{} }

func (s *blockingSink) Trace(context.Context, *trace.Trace) error {
	<-s.release
	return nil
}

func (s *blockingSink) Close(context.Context, FileResult) error { return nil }
