package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

// BenchmarkBatchSmallTraces stores traces of a small agent run's shape
// (about 30 KB: 26 steps, three findings, a full detector set's name), one
// file each, through a Batch, as an ingest of many small runs does; it
// prints traces/s. The steps-only and trace-only variants show what each
// part of a trace's write costs.
func BenchmarkBatchSmallTraces(b *testing.B) {
	for _, shape := range []struct {
		name            string
		steps, findings int
	}{{"whole", 26, 3}, {"no-steps", 0, 3}, {"no-findings", 26, 0}} {
		b.Run(shape.name, func(b *testing.B) {
			ctx := context.Background()
			st, err := Open(ctx, filepath.Join(b.TempDir(), "f.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			batch := st.Batch()
			b.ResetTimer()
			for i := range b.N {
				t := smallTrace(fmt.Sprintf("run-%07d", i), shape.steps, shape.findings)
				info := ingest.FileInfo{Path: "/runs/" + t.ID + ".jsonl", Hash: t.ID, Format: "codex"}
				if _, err := ingest.StoreFile(ctx, batch, info, t); err != nil {
					b.Fatal(err)
				}
			}
			if err := batch.Close(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "traces/s")
		})
	}
}

func smallTrace(id string, steps, findings int) *trace.Trace {
	words := strings.Fields("the pod restarts after the probe fails checkout service latency rises as the cache evicts keys under load")
	text := func(n int) string {
		var sb strings.Builder
		for k := 0; sb.Len() < n; k++ {
			sb.WriteString(words[(k*7+n)%len(words)])
			sb.WriteByte(' ')
		}
		return sb.String()
	}
	t := &trace.Trace{ID: id, Format: "codex", Source: id + ".jsonl", Model: "gpt-5", Task: "Diagnose the incident",
		Scenario: "scenario-3", DetectedWith: strings.Repeat("detector@1;", 48)}
	for k := range steps {
		switch k % 3 {
		case 0:
			t.Append(trace.Step{Kind: trace.KindMessage, Role: "assistant", Text: text(400 + 37*k)})
		case 1:
			t.Append(trace.Step{Kind: trace.KindToolCall, Role: "assistant", Tool: "shell", CallID: fmt.Sprint("c", k),
				Args: `{"command":["bash","-lc","kubectl get pods -n otel-demo"]}`})
		default:
			t.Append(trace.Step{Kind: trace.KindToolResult, Role: "tool", CallID: fmt.Sprint("c", k-1), Text: text(1800 + 53*k)})
		}
	}
	t.Link()
	for k := range findings {
		t.Findings = append(t.Findings, trace.Finding{Mode: fmt.Sprintf("FM-%d.%d", k%3+1, k+1), Source: "detector",
			Detector: "answer-format", Verdict: trace.Present, Steps: []int{min(k, max(steps-1, 0))}, Quote: "the pod", Confidence: 0.8,
			Explanation: "the answer file lacks a section the task asks for"})
	}
	return t
}
