package export

import (
	"bytes"
	"context"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// memSource serves traces from memory, in order.
type memSource []*trace.Trace

func (m memSource) List(context.Context, store.Filter) ([]store.Summary, error) {
	var out []store.Summary
	for _, t := range m {
		out = append(out, store.Summary{ID: t.ID})
	}
	return out, nil
}

func (m memSource) Load(_ context.Context, id string) (*trace.Trace, error) {
	for _, t := range m {
		if t.ID == id {
			c := *t
			return &c, nil
		}
	}
	return nil, store.ErrNotFound
}

func cohort() memSource {
	no := false
	otel := &trace.Trace{ID: "4bf92f3577b34da6a3ce929d0e0e4736", Format: "otlp-json", Model: "m",
		Meta:     map[string]string{"otel.trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "otel.root_span_id": "00f067aa0ba902b7"},
		Outcomes: []trace.Outcome{{Source: "labels", Success: &no}},
		Steps: []trace.Step{{Index: 0, Kind: trace.KindMessage, SpanID: "1a2b3c4d5e6f7081", Time: time.Unix(1767225600, 0)},
			{Index: 1, Kind: trace.KindToolCall, SpanID: "2b3c4d5e6f708192"}},
		Findings: []trace.Finding{
			{Mode: "FM-1.3", Source: "detector", Verdict: trace.Present, Detector: "repeated-tool-call", Steps: []int{1}, Quote: "ls", Confidence: 0.8},
			{Mode: "FM-1.3", Source: "judge:m", Verdict: trace.Present, Steps: []int{0, 1}},
			{Mode: "FM-3.3", Source: "human:ana", Verdict: trace.Absent},
			{Mode: "", Source: "mad:annotator_1", Verdict: trace.Present, RawLabel: "Blame game"},
		}}
	codex := &trace.Trace{ID: "019bc2a7", Format: "codex",
		Steps:    []trace.Step{{Index: 0, Kind: trace.KindMessage}},
		Findings: []trace.Finding{{Mode: "SYS-1", Source: "detector", Verdict: trace.Present, Steps: []int{0}}}}
	quiet := &trace.Trace{ID: "quiet", Format: "codex"}
	return memSource{otel, codex, quiet}
}

func export(t *testing.T, format string, opts Options) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := Write(context.Background(), cohort(), &b, format, opts); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestModeRows(t *testing.T) {
	rows, err := csv.NewReader(strings.NewReader(export(t, "csv", Options{}))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+3*18 {
		t.Fatalf("%d rows", len(rows))
	}
	got := map[string]string{}
	for _, r := range rows[1:] {
		got[r[0]+" "+r[13]] = strings.Join(r[16:], ",") + " success=" + r[12]
	}
	for key, want := range map[string]string{
		"4bf92f3577b34da6a3ce929d0e0e4736 FM-1.3": "true,detector;judge:m,,2,0 success=false",
		"4bf92f3577b34da6a3ce929d0e0e4736 FM-3.3": "false,,human:ana,0, success=false",
		"019bc2a7 SYS-1": "true,detector,,1,0 success=",
		"quiet FM-1.1":   "false,,,0, success=",
	} {
		if got[key] != want {
			t.Errorf("%s: %q, want %q", key, got[key], want)
		}
	}
	if s := export(t, "csv", Options{Sources: []string{"judge"}}); strings.Count(s, "detector") > 0 || !strings.Contains(s, "judge:m") {
		t.Errorf("--source judge kept other sources:\n%s", s)
	}
}

func TestFindingRows(t *testing.T) {
	out := export(t, "jsonl", Options{Findings: true})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d rows:\n%s", len(lines), out)
	}
	if !strings.Contains(lines[0], `"mode":"FM-1.3","mode_name":"Step repetition","category":"FC1","source":"detector","verdict":"present","detector":"repeated-tool-call","steps":[1],"span_id":"2b3c4d5e6f708192","quote":"ls","confidence":0.8`) {
		t.Errorf("row 0: %s", lines[0])
	}
	if !strings.Contains(lines[3], `"mode":"","mode_name":"Blame game"`) || !strings.Contains(lines[3], `"steps":[]`) {
		t.Errorf("unmapped label: %s", lines[3])
	}
}

func TestOTLPEvents(t *testing.T) {
	out := export(t, "otlp", Options{})
	if out != export(t, "otlp", Options{}) {
		t.Error("two exports differ")
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d documents, want one per trace with findings", len(lines))
	}
	ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs([]byte(lines[0]))
	if err != nil {
		t.Fatal(err)
	}
	recs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	want := []string{"2b3c4d5e6f708192", "1a2b3c4d5e6f7081", "00f067aa0ba902b7", "00f067aa0ba902b7"} // cited step, first cited step, root, root
	for i, span := range want {
		lr := recs.At(i)
		if lr.SpanID().String() != span || lr.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("record %d on %s/%s, want span %s", i, lr.TraceID(), lr.SpanID(), span)
		}
	}
	label, _ := recs.At(2).Attributes().Get("gen_ai.evaluation.score.label")
	name, _ := recs.At(3).Attributes().Get("gen_ai.evaluation.name")
	expl, _ := recs.At(0).Attributes().Get("gen_ai.evaluation.explanation")
	if label.Str() != "absent" || name.Str() != "Blame game" || expl.Str() != `Evidence: "ls"` {
		t.Errorf("attributes: %q %q %q", label.Str(), name.Str(), expl.Str())
	}
	// A trace from another format gets ids derived from its own, stably.
	ld, _ = (&plog.JSONUnmarshaler{}).UnmarshalLogs([]byte(lines[1]))
	lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	if lr.TraceID() != otelTraceID(&trace.Trace{ID: "019bc2a7"}) || lr.SpanID() != derivedSpanID("019bc2a7/step/0") {
		t.Errorf("derived ids %s %s", lr.TraceID(), lr.SpanID())
	}
}
