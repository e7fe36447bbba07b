// Command cohortgen writes a generated cohort into a faultline store for
// the report bench: N traces of three simulated models, each judged on all
// 14 MAST modes, with detector findings and a scored outcome. It uses only
// the store's ingest interface, so that bench/report.sh can build it against
// an earlier revision too and so write a store of that revision's schema.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"time"

	"github.com/faultline/faultline/internal/store/sqlite"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

func main() {
	db := flag.String("db", "", "the store to write (it must not exist)")
	n := flag.Int("traces", 100000, "traces to generate")
	flag.Parse()
	if *db == "" {
		log.Fatal("-db is required")
	}
	if _, err := os.Stat(*db); !errors.Is(err, os.ErrNotExist) {
		log.Fatalf("%s exists", *db)
	}
	start := time.Now()
	findings, err := generate(*db, *n)
	if err != nil {
		log.Fatal(err)
	}
	secs := time.Since(start).Seconds()
	fmt.Printf("generated %d traces, %d findings in %.1f s (%.0f traces/s)\n", *n, findings, secs, float64(*n)/secs)
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
