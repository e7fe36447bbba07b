package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

func TestExportCommand(t *testing.T) {
	c := newCLI(t)
	if _, errOut, code := c.run("", "ingest", "-q", examples, "../../ingest/testdata/otlp/genai_current.json"); code != exitOK {
		t.Fatalf("ingest: %s", errOut)
	}

	// CSV: a row per trace and mode, 14 MAST modes and 4 system failures.
	out, errOut, code := c.run("", "export", "--format", "csv")
	if code != exitOK {
		t.Fatal(errOut)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := strings.Join(rows[0], ",")
	if header != "trace_id,otel_trace_id,format,system,model,scenario,trial,started,steps,outcome_source,metric,score,success,mode,mode_name,category,present,present_sources,absent_sources,findings,first_step" {
		t.Errorf("header %s", header)
	}
	if len(rows) != 1+14*18 {
		t.Errorf("%d rows", len(rows))
	}
	present := 0
	for _, r := range rows[1:] {
		if r[16] == "true" {
			present++
			if r[17] == "" || r[20] == "" {
				t.Errorf("present row without sources or step: %v", r)
			}
		}
	}
	if present == 0 {
		t.Error("no mode present in the examples")
	}

	// JSON Lines of findings, one model.
	out, _, _ = c.run("", "export", "--format", "jsonl", "--findings", "--model", "gpt-4.1")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var f struct {
		Mode    string  `json:"mode"`
		SpanID  string  `json:"span_id"`
		Steps   []int   `json:"steps"`
		Success *bool   `json:"success"`
		Score   *string `json:"score"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &f); err != nil || len(lines) != 2 || f.Mode != "SYS-3" || f.SpanID != "51f067aa0ba902b9" ||
		len(f.Steps) != 1 || f.Success == nil || *f.Success || f.Score != nil {
		t.Errorf("findings: %v %s", err, out)
	}

	// OTLP logs to a file: each finding an event on its own span.
	file := filepath.Join(t.TempDir(), "eval.jsonl")
	if _, errOut, code := c.run("", "export", "--format", "otlp", "-o", file); code != exitOK || !strings.Contains(errOut, "exported 14 traces") {
		t.Fatalf("exit %d %s", code, errOut)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	events, otelIDs := 0, 0
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(line)
		if err != nil {
			t.Fatal(err)
		}
		records := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		for i := 0; i < records.Len(); i++ {
			lr := records.At(i)
			name, _ := lr.Attributes().Get("gen_ai.evaluation.name")
			if lr.EventName() != "gen_ai.evaluation.result" || lr.TraceID().IsEmpty() || lr.SpanID().IsEmpty() || name.Str() == "" {
				t.Errorf("record %d: %s %s %s %q", i, lr.EventName(), lr.TraceID(), lr.SpanID(), name.Str())
			}
			if lr.TraceID().String() == "5bf92f3577b34da6a3ce929d0e0e4737" {
				otelIDs++
			}
			events++
		}
	}
	if otelIDs != 2 || events < 3 {
		t.Errorf("%d events, %d on the OTLP trace", events, otelIDs)
	}

	// OTLP spans, for backends that take traces only.
	out, _, _ = c.run("", "export", "--format", "otlp", "--signal", "spans", "--trace-format", "otlp-json")
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(strings.TrimSpace(out)))
	if err != nil {
		t.Fatal(err)
	}
	sp := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	if sp.ParentSpanID().String() != "51f067aa0ba902b9" || sp.Events().At(0).Name() != "gen_ai.evaluation.result" || td.SpanCount() != 2 {
		t.Errorf("spans: %s", out)
	}

	if _, errOut, code := c.run("", "export", "--format", "xml"); code != exitFailure || !strings.Contains(errOut, "--format must be one of otlp, csv, jsonl") {
		t.Errorf("bad format: %d %s", code, errOut)
	}
	if _, errOut, code := c.run("", "export", "--format", "otlp", "--signal", "metrics"); code != exitFailure || !strings.Contains(errOut, "unknown OTLP signal") {
		t.Errorf("bad signal: %d %s", code, errOut)
	}
}
