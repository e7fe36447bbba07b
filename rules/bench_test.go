package rules

import (
	"context"
	"testing"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/shared"
	"github.com/faultline/faultline/trace"
)

// BenchmarkRules compares the example rules with the built-in detectors
// over the real Codex rollouts: one op is every trace of the corpus, run
// through detect.Run as ingest does. Each rule is measured alone too.
func BenchmarkRules(b *testing.B) {
	dir := shared.Path(b, "itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1")
	traces, _, err := ingest.ReadAll(context.Background(), []string{dir}, ingest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	steps := 0
	for _, t := range traces {
		steps += len(t.Steps)
	}
	s := itbenchRules(b)
	bench := func(name string, ds []*detect.Detector) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				runAll(traces, ds)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(steps), "ns/step")
		})
	}
	bench("builtin", detect.All)
	bench("rules", s.Detectors())
	for _, d := range s.Detectors() {
		bench("rule/"+d.Name, []*detect.Detector{d})
	}
}

func runAll(traces []*trace.Trace, ds []*detect.Detector) {
	for _, t := range traces {
		detect.Run(t, ds)
	}
}
