// Command reportbench measures two faultline binaries, an earlier one and
// a later one, on the same generated cohort (bench/cohortgen): `faultline
// report` in each format, the dashboard's first view and the agreement
// page's first view (each from a fresh `faultline serve`). Each figure is
// the median of a few rounds, the two binaries taking turns, and is
// printed beside the other's: wall time, CPU time (on a shared machine the
// wall clock also counts other processes) and the peak resident memory the
// kernel kept for the process.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// side is one binary with the store it reads (an earlier binary reads a
// store of its own schema).
type side struct {
	name, bin, db string
}

// figure is one measurement.
type figure struct {
	wall, cpu time.Duration
	rss       float64 // MB
}

func main() {
	before := flag.String("before", "", "the earlier faultline binary")
	beforeDB := flag.String("before-db", "", "the store the earlier binary reads")
	after := flag.String("after", "", "the later faultline binary")
	afterDB := flag.String("after-db", "", "the store the later binary reads")
	rounds := flag.Int("rounds", 3, "rounds of each measurement (the median is printed)")
	formats := flag.String("formats", "json,text,md,html", "report formats to time")
	agreement := flag.String("agreement", "a=judge:bench&b=detector&raters=1", "the agreement page's query; empty to skip it")
	flag.Parse()
	if *before == "" || *after == "" || *beforeDB == "" || *afterDB == "" {
		log.Fatal("-before, -before-db, -after and -after-db are required")
	}
	sides := []side{{"before", *before, *beforeDB}, {"after", *after, *afterDB}}
	type measure struct {
		name string
		run  func(side) (figure, error)
	}
	var measures []measure
	for _, format := range strings.Split(*formats, ",") {
		measures = append(measures, measure{"report --format " + format, func(s side) (figure, error) { return report(s, format) }})
	}
	measures = append(measures, measure{"dashboard, first view", func(s side) (figure, error) { return page(s, "/") }})
	if *agreement != "" {
		measures = append(measures, measure{"agreement, first view", func(s side) (figure, error) { return page(s, "/agreement?"+*agreement) }})
	}
	for _, m := range measures {
		figures := make([][]figure, len(sides))
		for range *rounds {
			for i, s := range sides {
				f, err := m.run(s)
				if err != nil {
					log.Fatalf("%s, %s: %v", m.name, s.name, err)
				}
				figures[i] = append(figures[i], f)
			}
		}
		for i, s := range sides {
			f := median(figures[i])
			fmt.Printf("%-24s %-6s %8.2f s wall %8.2f s CPU  peak RSS %7.1f MB\n", m.name, s.name, f.wall.Seconds(), f.cpu.Seconds(), f.rss)
		}
	}
}

// report times `faultline report` writing to /dev/null.
func report(s side, format string) (figure, error) {
	cmd := exec.Command(s.bin, "--db", s.db, "report", "--format", format, "-o", os.DevNull)
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return figure{}, err
	}
	u := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return figure{
		wall: time.Since(start),
		cpu:  cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(),
		rss:  float64(u.Maxrss) / 1024, // KiB on Linux
	}, nil
}

// page starts `faultline serve` on a free loopback port, waits until it
// answers, then times one request of path: the first view, which builds
// what the server keeps for later ones. CPU time and peak memory are the
// server's, from /proc, up to the end of the request.
func page(s side, path string) (figure, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return figure{}, err
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(s.bin, "--db", s.db, "serve", "--addr", addr)
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Start(); err != nil {
		return figure{}, err
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if ctx.Err() != nil {
			return figure{}, errors.New("serve did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cpu0, _, err := usage(cmd.Process.Pid)
	if err != nil {
		return figure{}, err
	}
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+addr+path, nil)
	if err != nil {
		return figure{}, err
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return figure{}, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	wall := time.Since(start)
	if err != nil {
		return figure{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return figure{}, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	cpu1, rss, err := usage(cmd.Process.Pid)
	return figure{wall: wall, cpu: cpu1 - cpu0, rss: rss}, err
}

// usage reads a process's CPU time so far and its peak resident memory.
func usage(pid int) (time.Duration, float64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The fields after the command's closing parenthesis; utime and stime
	// are the 14th and 15th of the line, in clock ticks (100 a second).
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	var kb float64
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ = strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		}
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, kb / 1024, nil
}

// median takes the median of each of the figures' measures.
func median(fs []figure) figure {
	mid := func(v func(figure) float64) float64 {
		vs := make([]float64, len(fs))
		for i, f := range fs {
			vs[i] = v(f)
		}
		slices.Sort(vs)
		return vs[len(vs)/2]
	}
	return figure{
		wall: time.Duration(mid(func(f figure) float64 { return float64(f.wall) })),
		cpu:  time.Duration(mid(func(f figure) float64 { return float64(f.cpu) })),
		rss:  mid(func(f figure) float64 { return f.rss }),
	}
}
