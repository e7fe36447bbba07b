// Command ingestbench measures how fast faultline reads Codex rollouts and how
// much memory it holds while doing so, next to a plain encoding/json decode of
// the same bytes into map[string]any. Each mode runs in its own process (see
// bench/ingest.sh) so that the peak resident memory reported is its own.
//
// With -gen it writes the files bench/longline.sh measures instead: files
// whose size is all in one line, one text, one sample (see gen.go). The
// program uses only what ingest has long offered, so that it also builds
// against an older revision, for a comparison.
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
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/faultline/faultline/internal/pipeline"
	"github.com/faultline/faultline/internal/store/sqlite"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

func main() {
	mode := flag.String("mode", "decode", "decode (faultline's decoders), detect (decode + detectors), store (full ingest into SQLite), map (encoding/json into map[string]any), "+
		"or dump (write every trace and issue read from -file, a file or directory, as JSON, to compare what two revisions decode)")
	file := flag.String("file", "", "the file to read")
	gen := flag.String("gen", "", "write a file of this shape to -o and exit: "+shapes)
	sizeMB := flag.Int("mb", 200, "with -gen: the size of its long part, in MB")
	out := flag.String("o", "", "with -gen: the file to write")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	flag.Parse()
	if *gen != "" {
		if err := generate(*gen, *sizeMB*1000*1000, *out); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *file == "" {
		log.Fatal("-file is required")
	}
	if *mode == "dump" {
		if err := dump(*file); err != nil {
			log.Fatal(err)
		}
		return
	}
	info, err := os.Stat(*file)
	if err != nil {
		log.Fatal(err)
	}
	if *cpuprofile != "" {
		stop, err := profileCPU(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		defer stop()
	}
	start, cpuStart := time.Now(), cpuTime()
	c := &countSink{detectors: *mode == "detect"}
	switch *mode {
	case "decode", "detect":
		_, err = ingest.Paths(context.Background(), []string{*file}, c, ingest.Options{})
	case "store":
		err = storeAll(*file, c)
	case "map":
		c.steps, err = decodeMaps(*file)
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		log.Fatal(err)
	}
	secs, cpu := time.Since(start).Seconds(), cpuTime()-cpuStart
	mb := float64(info.Size()) / 1e6
	fmt.Printf("%-7s %8.1f MB  %6.2f s  %7.1f MB/s  cpu %6.2f s  %7.1f MB/cpu-s  peak RSS %6.1f MB  traces %d  steps/lines %d  longest text %d%s\n",
		*mode, mb, secs, mb/secs, cpu, mb/cpu, peakRSS(), c.traces, c.steps, c.longest, c.cut)
}

// countSink counts what it is given, dropping each trace once emitted
// (optionally after running the detectors), as ingest does.
type countSink struct {
	detectors     bool
	traces, steps int
	longest       int    // bytes of the longest step text or arguments
	cut           string // the texts cut to the text limit, as the meta lists them
}

func (c *countSink) File(context.Context, ingest.FileInfo) (ingest.FileSink, error) { return c, nil }
func (c *countSink) Close(context.Context, ingest.FileResult) error                 { return nil }
func (c *countSink) Trace(_ context.Context, t *trace.Trace) error {
	c.count(t)
	if c.detectors {
		detect.Run(t, detect.All)
	}
	return nil
}

func (c *countSink) count(t *trace.Trace) {
	c.traces++
	c.steps += len(t.Steps)
	for _, s := range t.Steps {
		c.longest = max(c.longest, len(s.Text), len(s.Args))
	}
	if cut := t.Meta["cut_texts"]; cut != "" { // ingest.CutTextsMeta, spelt out for older revisions
		c.cut = "  cut: " + cut
	}
}

// storeAll ingests the file into a fresh SQLite database, detectors on,
// counting the traces on their way.
func storeAll(path string, c *countSink) error {
	dir, err := os.MkdirTemp("", "ingestbench-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "bench.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	batch := st.Batch() // as faultline ingest writes
	_, err = ingest.Paths(ctx, []string{path}, pipeline.Detecting(&counting{batch, c}, detect.All, func(error) {}), ingest.Options{})
	if cerr := batch.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// counting counts the traces on their way to a sink.
type counting struct {
	next ingest.Sink
	c    *countSink
}

func (s *counting) File(ctx context.Context, f ingest.FileInfo) (ingest.FileSink, error) {
	fs, err := s.next.File(ctx, f)
	if fs == nil || err != nil {
		return fs, err
	}
	return &countingFile{fs, s.c}, nil
}

type countingFile struct {
	ingest.FileSink
	c *countSink
}

func (f *countingFile) Trace(ctx context.Context, t *trace.Trace) error {
	f.c.count(t)
	return f.FileSink.Trace(ctx, t)
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

// dump writes, one a line, the JSON of every trace read from path and of
// every issue reported, in the order they come.
func dump(path string) error {
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	var encErr error
	report := func(i ingest.Issue) {
		if err := enc.Encode(map[string]any{"issue": i.String(), "severity": i.Severity.String()}); err != nil && encErr == nil {
			encErr = err
		}
	}
	_, err := ingest.Paths(context.Background(), []string{path}, &dumpSink{enc}, ingest.Options{Report: report})
	if err == nil {
		err = encErr
	}
	if err == nil {
		err = w.Flush()
	}
	return err
}

// dumpSink writes each trace as JSON.
type dumpSink struct{ enc *json.Encoder }

func (d *dumpSink) File(context.Context, ingest.FileInfo) (ingest.FileSink, error) { return d, nil }
func (d *dumpSink) Close(context.Context, ingest.FileResult) error                 { return nil }
func (d *dumpSink) Trace(_ context.Context, t *trace.Trace) error                  { return d.enc.Encode(t) }

// profileCPU starts a CPU profile written to path; the function it returns
// stops it.
func profileCPU(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			log.Print(err)
		}
	}, nil
}

// cpuTime is the processor time the process has used, user and system, in
// seconds: on a shared machine, what a mode costs whatever else runs.
func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
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
