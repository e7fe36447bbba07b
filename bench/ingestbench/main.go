// Command ingestbench measures how fast faultline reads Codex rollouts and how
// much memory it holds while doing so, next to a plain encoding/json decode of
// the same bytes into map[string]any. Each mode runs in its own process (see
// bench/ingest.sh) so that the peak resident memory reported is its own.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/faultline/faultline/internal/pipeline"
	"github.com/faultline/faultline/internal/store/sqlite"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

func main() {
	mode := flag.String("mode", "decode", "decode (faultline's Codex decoder), detect (decode + detectors), store (full ingest into SQLite), or map (encoding/json into map[string]any)")
	file := flag.String("file", "", "JSONL file to read")
	flag.Parse()
	if *file == "" {
		log.Fatal("-file is required")
	}
	info, err := os.Stat(*file)
	if err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	var traces, steps int
	switch *mode {
	case "decode", "detect":
		traces, steps, err = decode(*file, *mode == "detect")
	case "store":
		traces, err = storeAll(*file)
	case "map":
		steps, err = decodeMaps(*file)
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		log.Fatal(err)
	}
	secs := time.Since(start).Seconds()
	mb := float64(info.Size()) / 1e6
	fmt.Printf("%-7s %8.1f MB  %6.2f s  %7.1f MB/s  peak RSS %6.1f MB  traces %d  steps/lines %d\n",
		*mode, mb, secs, mb/secs, peakRSS(), traces, steps)
}

// decode streams the file through the Codex decoder, dropping each trace once
// emitted (optionally after running the detectors), as ingest does.
func decode(path string, withDetectors bool) (traces, steps int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sink := &countSink{detectors: withDetectors}
	_, err = ingest.Paths(context.Background(), []string{path}, sink, ingest.Options{})
	return sink.traces, sink.steps, err
}

type countSink struct {
	detectors     bool
	traces, steps int
}

func (c *countSink) File(context.Context, ingest.FileInfo) (ingest.FileSink, error) { return c, nil }
func (c *countSink) Close(context.Context, ingest.FileResult) error                 { return nil }
func (c *countSink) Trace(_ context.Context, t *trace.Trace) error {
	c.traces++
	c.steps += len(t.Steps)
	if c.detectors {
		detect.Run(t, detect.All)
	}
	return nil
}

// storeAll ingests the file into a fresh SQLite database, detectors on.
func storeAll(path string) (int, error) {
	dir, err := os.MkdirTemp("", "ingestbench-*")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "bench.db"))
	if err != nil {
		return 0, err
	}
	defer st.Close()
	sum, err := ingest.Paths(ctx, []string{path}, pipeline.Detecting(st, detect.All, func(error) {}), ingest.Options{})
	return sum.Traces, err
}

// decodeMaps is the baseline: every line into a map[string]any.
func decodeMaps(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	lines := 0
	for {
		line, err := r.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			var m map[string]any
			if jerr := json.Unmarshal(line, &m); jerr != nil {
				return lines, fmt.Errorf("line %d: %w", lines+1, jerr)
			}
			lines++
		}
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return lines, err
		}
	}
}

// peakRSS reads the process's high-water resident set size from /proc.
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(rest), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}
