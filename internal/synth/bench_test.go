package synth

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest"
)

// benchTraces is how many generated runs the benchmarks read: enough for
// every mode's variants and the controls, few enough to write in a second.
const benchTraces = 300

// benchCorpus writes benchTraces generated runs to a temporary directory
// and returns it with the size of its rollouts.
func benchCorpus(b *testing.B) (dir string, rolloutBytes int64) {
	b.Helper()
	c, err := Generate(Options{Traces: benchTraces})
	if err != nil {
		b.Fatal(err)
	}
	dir = b.TempDir()
	m, err := c.Write(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range m.Traces {
		info, err := os.Stat(filepath.Join(dir, t.Path))
		if err != nil {
			b.Fatal(err)
		}
		rolloutBytes += info.Size()
	}
	return dir, rolloutBytes
}

// BenchmarkDecode measures ingest's reading of generated runs (rollout,
// answer file and prompt of each run directory) into traces: the part of
// an ingest of many small traces before the detectors and the store. Its
// figures are per corpus of benchTraces runs and per byte of rollout.
func BenchmarkDecode(b *testing.B) {
	dir, n := benchCorpus(b)
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ingest.ReadAll(context.Background(), []string{dir}, ingest.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDetect measures every detector over the same runs, decoded
// once before.
func BenchmarkDetect(b *testing.B) {
	dir, n := benchCorpus(b)
	traces, _, err := ingest.ReadAll(context.Background(), []string{dir}, ingest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range traces {
			detect.Run(t, detect.All)
		}
	}
}
