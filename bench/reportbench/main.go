// Command reportbench measures how long `faultline report` takes and how
// much memory it holds on a large cohort. It generates a store of N traces
// (three models, every trace judged on all 14 MAST modes, detector findings
// and a scored outcome on each), then runs the faultline binary on it once
// per format and reports wall and CPU time and the child's peak resident memory,
// which the kernel keeps for it (getrusage), so the figure is the report's
// own and not the generator's.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/faultline/faultline/internal/store/sqlite"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

func main() {
	db := flag.String("db", "", "the store to generate (when absent) and report on")
	n := flag.Int("traces", 100000, "traces to generate")
	bin := flag.String("faultline", "", "the faultline binary to measure")
	flag.Parse()
	if *db == "" || *bin == "" {
		log.Fatal("-db and -faultline are required")
	}
	if _, err := os.Stat(*db); errors.Is(err, os.ErrNotExist) {
		start := time.Now()
		findings, err := generate(*db, *n)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("generated %d traces, %d findings in %.1f s\n", *n, findings, time.Since(start).Seconds())
	}
	for _, format := range []string{"json", "text", "md", "html"} {
		cmd := exec.Command(*bin, "--db", *db, "report", "--format", format, "-o", os.DevNull)
		cmd.Stderr = os.Stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			log.Fatalf("%s: %v", format, err)
		}
		secs := time.Since(start).Seconds()
		// CPU time as well as wall time: on a shared machine the wall
		// clock also counts the time other processes held the cores.
		cpu := (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
		rss := float64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) / 1024 // KiB on Linux
		fmt.Printf("report --format %-4s  %6.2f s wall  %6.2f s CPU  peak RSS %6.1f MB\n", format, secs, cpu, rss)
	}
}

// model is a simulated agent: how often it succeeds and how likely each
// mode is in its failed and its successful runs.
type model struct {
	name              string
	success           float64
	failed, succeeded float64 // base probability of a mode
}

var models = []model{
	{"sim-strong", 0.75, 0.18, 0.06},
	{"sim-middling", 0.3, 0.33, 0.12},
	{"sim-weak", 0.12, 0.38, 0.15},
}

// generate writes n traces, each with one step (the report never reads
// steps, and findings cite steps up to 60 without the store checking),
// 14 judge verdicts, detector findings and an outcome.
func generate(path string, n int) (findings int, err error) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	fs, err := st.File(ctx, ingest.FileInfo{Path: "/bench/cohort.jsonl", Hash: "bench", Format: "codex"})
	if err != nil {
		return 0, err
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		m := models[i%len(models)]
		success := r.Float64() < m.success
		score := 0.0
		if success {
			score = 1
		}
		tr := &trace.Trace{ID: fmt.Sprintf("bench-%07d", i), Format: "codex", Model: m.name, Scenario: fmt.Sprint(1 + i%35), Trial: fmt.Sprint(1 + i/105%3), DetectedWith: "bench"}
		tr.Append(trace.Step{Kind: trace.KindMessage, Role: "user", Text: "Diagnose the incident."})
		tr.Outcomes = []trace.Outcome{{Source: "itbench", Metric: "root_cause_recall", Score: &score, Success: &success}}
		for k, mode := range taxonomy.MAST.Modes {
			p := m.succeeded
			if !success {
				p = m.failed
			}
			// Later modes in the taxonomy are a little more common, so the
			// modes differ from one another.
			present := r.Float64() < p*(0.6+0.06*float64(k))
			f := trace.Finding{Mode: mode.Code, Source: "judge:bench", Verdict: trace.Absent, Taxonomy: taxonomy.Version}
			if present {
				f.Verdict = trace.Present
				f.Steps = []int{r.IntN(60)}
				if k%3 == 0 {
					tr.Findings = append(tr.Findings, trace.Finding{Mode: mode.Code, Source: "detector", Detector: "bench", Verdict: trace.Present, Steps: []int{r.IntN(60)}})
				}
			}
			tr.Findings = append(tr.Findings, f)
		}
		findings += len(tr.Findings)
		if err := fs.Trace(ctx, tr); err != nil {
			return 0, err
		}
	}
	return findings, fs.Close(ctx, ingest.FileResult{})
}
