package receive

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/faultline/faultline/internal/store/sqlite"
	"github.com/faultline/faultline/trace"
)

// keepSpans returns the sample's spans for which keep holds, as OTLP JSON.
func keepSpans(t *testing.T, keep func(id string) bool) []byte {
	t.Helper()
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
			ss.Spans().RemoveIf(func(s ptrace.Span) bool { return !keep(s.SpanID().String()) })
			return ss.Spans().Len() == 0
		})
		return rs.ScopeSpans().Len() == 0
	})
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Spans arriving after their trace was stored merge into it: the stored
// trace keeps its steps and gains the late ones in their place, as if the
// trace had arrived whole; spans it holds add nothing, whether the
// receiver remembers them (rejected as duplicates) or not (after a
// restart: assembled on their own, merged, found to add nothing).
func TestReceiveLateSpansMerge(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	lateIDs := []string{"3c4d5e6f708192a3", "4d5e6f708192a3b4"} // the last chat call and the HTTP call under it
	late := keepSpans(t, func(s string) bool { return slices.Contains(lateIDs, s) })
	early := keepSpans(t, func(s string) bool { return !slices.Contains(lateIDs, s) })
	ctx := context.Background()

	// The trace sent whole, into a store of its own: what the merge must give.
	whole, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "whole.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	rcv := start(t, Config{Sink: whole, Loader: whole, RootWait: 10 * time.Millisecond})
	post(t, rcv.addr, "application/json", sample(t))
	rcv.stop()
	want, err := whole.Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}

	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var stored []*trace.Trace
	rcv = start(t, Config{Sink: st, Loader: st, RootWait: 10 * time.Millisecond, Stored: func(t *trace.Trace) { stored = append(stored, t) }})
	post(t, rcv.addr, "application/json", early)
	waitFor(t, "the early spans", func() bool { return rcv.r.Stats().Stored == 2 })
	first, err := st.Load(ctx, id)
	if err != nil || len(first.Steps) != 5 {
		t.Fatalf("stored before the late spans: %v %s", err, kinds(first))
	}
	if resp, body := post(t, rcv.addr, "application/json", late); resp.StatusCode != 200 || string(body) != "{}" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	waitFor(t, "the late spans", func() bool { return rcv.r.Stats().Merged == 1 })
	got, err := st.Load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if kinds(got) != kinds(want) || spanList(got) != spanList(want) {
		t.Errorf("merged\n %s\n %s\nwant\n %s\n %s", kinds(got), spanList(got), kinds(want), spanList(want))
	}
	if got.Meta["otel.spans"] != "5" || got.Usage != want.Usage || got.DetectedWith != want.DetectedWith {
		t.Errorf("meta %v usage %+v", got.Meta, got.Usage)
	}
	for i := range first.Steps {
		if first.Steps[i].Text != got.Steps[i].Text || first.Steps[i].SpanID != got.Steps[i].SpanID {
			t.Errorf("stored step %d changed: %+v", i, got.Steps[i])
		}
	}
	if len(stored) != 3 || len(stored[2].Steps) != 7 {
		t.Errorf("stored callbacks: %d", len(stored))
	}

	// Sent again: the receiver knows the spans are stored.
	resp, body := post(t, rcv.addr, "application/json", late)
	if rejected, msg, err := partialSuccess(body); err != nil || resp.StatusCode != 200 || rejected != "2" || !strings.Contains(msg, "in it already") {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
	if err := rcv.stop(); err != nil {
		t.Fatal(err)
	}

	// After a restart it does not: the spans are merged, adding nothing.
	rcv = start(t, Config{Sink: st, Loader: st, RootWait: time.Hour, IdleTimeout: 20 * time.Millisecond})
	post(t, rcv.addr, "application/json", late)
	waitFor(t, "the spans sent again", func() bool { return rcv.r.Stats().NotStored == 1 })
	if err := rcv.stop(); err != nil {
		t.Fatal(err)
	}
	if s := rcv.r.Stats(); s.Stored != 0 || s.Merged != 0 {
		t.Errorf("stats %+v", s)
	}
	if again, err := st.Load(ctx, id); err != nil || kinds(again) != kinds(want) {
		t.Errorf("after the restart: %v %s", err, kinds(again))
	}
}

func spanList(t *trace.Trace) string {
	var out []string
	for _, s := range t.Steps {
		out = append(out, s.SpanID)
	}
	return strings.Join(out, " ")
}

// Late spans of a trace stored before a restart, cut off by a shutdown
// before the idle timeout, are merged all the same: at shutdown a rootless
// trace is asked of the store. One the store does not hold is not stored.
func TestReceiveLateSpansMergedAtShutdown(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	lateIDs := []string{"3c4d5e6f708192a3", "4d5e6f708192a3b4"}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rcv := start(t, Config{Sink: st, Loader: st, RootWait: 10 * time.Millisecond})
	post(t, rcv.addr, "application/json", keepSpans(t, func(s string) bool { return !slices.Contains(lateIDs, s) }))
	waitFor(t, "the early spans", func() bool { return rcv.r.Stats().Stored == 2 })
	if err := rcv.stop(); err != nil {
		t.Fatal(err)
	}

	rcv = start(t, Config{Sink: st, Loader: st, RootWait: time.Hour, IdleTimeout: time.Hour})
	post(t, rcv.addr, "application/json", keepSpans(t, func(s string) bool { return slices.Contains(lateIDs, s) }))
	orphan := bytes.ReplaceAll(keepSpans(t, func(s string) bool { return s == lateIDs[0] }), []byte(id), []byte("00000000000000000000000000000abc"))
	post(t, rcv.addr, "application/json", orphan)
	if err := rcv.stop(); err != nil {
		t.Fatal(err)
	}
	if s := rcv.r.Stats(); s.Merged != 1 || s.NotStored != 1 {
		t.Errorf("merged %d, not stored %d; want 1 and 1 (the orphan)", s.Merged, s.NotStored)
	}
	if got, err := st.Load(ctx, id); err != nil || len(got.Steps) != 7 {
		t.Errorf("after the shutdown: %v %s", err, kinds(got))
	}
}
