// Command soakbench runs faultline under load with faults, for bench/soak.sh:
// a live receiver (durable mode), repeated ingests and the web UI share one
// database for a set time while clients post OTLP traces and late spans,
// save labels and read pages, and the receiver and the ingest are killed
// (SIGKILL) at random. It then checks that every acknowledged trace and
// every saved label is in the store, that every ingested trace is stored
// whole, and that SQLite's integrity check and the search index's are
// clean. It prints the figures and exits 1 when anything was lost.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.Faultline, "faultline", "faultline", "the faultline binary to run")
	flag.StringVar(&cfg.Dir, "dir", "", "scratch directory (database, spool, trace files, logs); a new temporary one when empty")
	flag.DurationVar(&cfg.Duration, "duration", 3*time.Minute, "how long the load runs before the checks")
	flag.DurationVar(&cfg.KillEvery, "kill-every", 4*time.Second, "mean time between two kills")
	flag.Uint64Var(&cfg.Seed, "seed", uint64(time.Now().UnixNano()), "seed of the kill times and the generated traces")
	flag.IntVar(&cfg.MaxTraces, "max-traces", 20000, "stop posting after this many traces (a bound on the run's size)")
	flag.Parse()
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "faultline-soak-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		defer os.RemoveAll(dir)
		cfg.Dir = dir
	}
	cfg.Progress = os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fig, err := soak(ctx, cfg)
	if fig != nil {
		fig.print(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	if lost := fig.losses(); len(lost) > 0 {
		for _, l := range lost {
			fmt.Println("LOST:", l)
		}
		os.Exit(1)
	}
	fmt.Println("nothing acknowledged was lost")
}
