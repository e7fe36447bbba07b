// Command storecopy copies every trace of one faultline store into another,
// steps, findings and outcomes, so that a bench can read the same cohort
// from both backends (bench/postgres.sh fills a PostgreSQL database from a
// SQLite cohort that bench/cohortgen generated). Each database is a SQLite
// path or a postgres:// URL; the destination must hold none of the traces.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/store/open"
	"github.com/faultline/faultline/trace"
)

func main() {
	from := flag.String("from", "", "the store to read")
	to := flag.String("to", "", "the store to write")
	perFile := flag.Int("per-file", 500, "traces stored as one file (one transaction)")
	flag.Parse()
	if *from == "" || *to == "" {
		log.Fatal("-from and -to are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := copyStore(ctx, *from, *to, max(*perFile, 1)); err != nil {
		log.Fatal(err)
	}
}

func copyStore(ctx context.Context, from, to string, perFile int) error {
	src, err := open.ReadOnly(ctx, from)
	if err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	defer src.Close()
	dst, err := open.Store(ctx, to)
	if err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	defer dst.Close()
	ids, err := src.IDs(ctx, store.TraceQuery{})
	if err != nil {
		return err
	}
	start := time.Now()
	for at := 0; at < len(ids); at += perFile {
		chunk := ids[at:min(at+perFile, len(ids))]
		traces := make([]*trace.Trace, 0, len(chunk))
		for _, id := range chunk {
			t, err := src.Load(ctx, id)
			if err != nil {
				return fmt.Errorf("reading %s: %w", id, err)
			}
			traces = append(traces, t)
		}
		info := ingest.FileInfo{Path: fmt.Sprintf("copy:%s#%d", from, at/perFile), Hash: fmt.Sprint(at), Format: "copy"}
		if _, err := ingest.StoreFile(ctx, dst, info, traces...); err != nil {
			return fmt.Errorf("writing traces %d-%d: %w", at, at+len(chunk), err)
		}
		if done := at + len(chunk); done%(perFile*20) == 0 || done == len(ids) {
			fmt.Fprintf(os.Stderr, "%d of %d traces, %.0f traces/s\n", done, len(ids), float64(done)/time.Since(start).Seconds())
		}
	}
	return nil
}
