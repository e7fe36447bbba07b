// Command guardbench measures faultline guard's proxy (package guardproxy)
// on loopback, for bench/guard.sh: a fake upstream answers chat
// completions in a fixed time; open-loop load at each -rates through the
// proxy and straight to the upstream gives the proxy's added latency (p50,
// p99) for answers read whole and its added time to first token for
// streamed ones; then -sessions sessions of -steps steps each are opened
// and the heap in use before and after, divided by their number, is the
// memory of an open session.
//
// Requests are those of agents working through a task: each carries its
// conversation's history so far (system, task, then a tool call and its
// result a turn, each turn's command another), up to -turns turns, when
// the agent starts a new one. Requests are due on schedule, each sent by
// one of -agents agents that has its last answer (an agent sends its next
// turn only then), or by a new agent when all wait. The upstream
// answers each with a tool call. The CPU time the process spends a request
// (load, upstream and, proxied, the proxy) tells the proxy's share apart
// from what the machine's other load does to the latencies.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/faultline/faultline/guard"
	"github.com/faultline/faultline/internal/guardproxy"
)

func main() {
	policyPath := flag.String("policy", "examples/guard.yaml", "guard policy `FILE`")
	rates := flag.String("rates", "200,1000", "open-loop request rates, per second, comma-separated")
	duration := flag.Duration("duration", 5*time.Second, "how long each load runs")
	delay := flag.Duration("upstream-delay", 20*time.Millisecond, "how long the upstream takes to answer (to its first chunk, streamed)")
	agents := flag.Int("agents", 400, "agents sending requests, more when all wait for an answer")
	turns := flag.Int("turns", 20, "turns of a conversation before its agent starts a new one")
	sessions := flag.Int("sessions", 1000, "sessions opened to measure memory")
	steps := flag.Int("steps", 50, "steps of each session opened to measure memory")
	flag.BoolVar(&looping, "looping", false, "agents that loop: the same command and output every turn (the loop detectors' costly case)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the loads to `FILE`")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}

	pol, err := guard.Load(*policyPath)
	if err != nil {
		log.Fatal(err)
	}
	up, _ := serve(upstream(*delay))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4096, MaxIdleConns: 4096}}
	fmt.Printf("upstream answers in %s; policy %s (%d rules); %d agents of up to %d turns (looping: %v)\n", *delay, pol.Name, len(pol.Rules), *agents, *turns, looping)

	// First, while the heap holds nothing of the loads.
	memory(client, up, pol, *sessions, *steps)
	for _, r := range strings.Split(*rates, ",") {
		rate, err := strconv.Atoi(strings.TrimSpace(r))
		if err != nil || rate <= 0 {
			log.Fatalf("-rates: %q is not a rate", r)
		}
		for _, stream := range []bool{false, true} {
			// A fresh proxy for each load: sessions of one do not meet the next.
			proxy := guardproxy.New(guardproxy.Config{Upstream: mustURL(up), Policy: pol})
			through, stop := serve(proxy)
			l := load{client: client, rate: rate, duration: *duration, agents: *agents, turns: *turns, stream: stream}
			cpu0 := cpuTime()
			direct := l.run(up)
			cpu1 := cpuTime()
			proxied := l.run(through)
			cpu2 := cpuTime()
			what := "non-streaming latency"
			if stream {
				what = "streaming time to first token"
			}
			fmt.Printf("%s at %d req/s for %s:\n", what, rate, *duration)
			fmt.Printf("  direct   %s\n  proxied  %s\n", direct, proxied)
			fmt.Printf("  added    p50 %s  p99 %s\n", ms(proxied.p(50)-direct.p(50)), ms(proxied.p(99)-direct.p(99)))
			perDirect, perProxied := (cpu1-cpu0)/time.Duration(len(direct.times)+direct.errors), (cpu2-cpu1)/time.Duration(len(proxied.times)+proxied.errors)
			fmt.Printf("  CPU a request (this process: load, upstream and proxy): direct %s, proxied %s: the proxy's %s\n", ms(perDirect), ms(perProxied), ms(perProxied-perDirect))
			s := proxy.Stats()
			decisions := 0
			for _, byAction := range s.Decisions {
				for _, n := range byAction {
					decisions += int(n)
				}
			}
			fmt.Printf("  proxy: %d requests, %d sessions open, %d started over, %d decisions, %d passed unguarded\n", s.Requests, s.OpenSessions, s.StartedOver, decisions, s.FailOpen)
			stop()
			client.CloseIdleConnections()
		}
	}
}

// memory opens n sessions of m steps each through a fresh proxy and prints
// the heap they hold, each. The policy's session limit is raised to n.
func memory(client *http.Client, up string, pol *guard.Policy, n, m int) {
	pol.MaxSessions = max(pol.MaxSessions, n)
	proxy := guardproxy.New(guardproxy.Config{Upstream: mustURL(up), Policy: pol})
	through, stop := serve(proxy)
	before := heap()
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				// m-1 steps of history, and the answer's tool call.
				body := requestBody(i, (m-3)/2, false)
				if err := send(client, through, fmt.Sprintf("mem-%d", i), body, false); err != nil {
					log.Fatal(err)
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	after := heap()
	open := proxy.Stats().OpenSessions
	fmt.Printf("memory: %d sessions of %d steps open: heap in use %.1f MiB before, %.1f MiB after: %.1f KiB a session\n",
		open, m, float64(before)/(1<<20), float64(after)/(1<<20), (float64(after)-float64(before))/float64(open)/1024)
	runtime.KeepAlive(proxy)
	stop()
	client.CloseIdleConnections()
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		log.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// load is open-loop load: requests start on a schedule, whether or not
// those before were answered, and each is timed from when it was due.
type load struct {
	client        *http.Client
	rate          int
	duration      time.Duration
	agents, turns int
	stream        bool
}

type result struct {
	times  []time.Duration
	errors int
	agents int // agents that sent requests
}

func (r result) p(q int) time.Duration {
	if len(r.times) == 0 {
		return 0
	}
	return r.times[min(len(r.times)-1, len(r.times)*q/100)]
}

func (r result) String() string {
	return fmt.Sprintf("p50 %s  p99 %s  (%d requests of %d agents, %d errors)", ms(r.p(50)), ms(r.p(99)), len(r.times)+r.errors, r.agents, r.errors)
}

func ms(d time.Duration) string { return fmt.Sprintf("%6.2fms", float64(d)/float64(time.Millisecond)) }

func (l load) run(base string) result {
	n := int(l.duration.Seconds() * float64(l.rate))
	interval := time.Second / time.Duration(l.rate)
	// An agent sends its next turn once it has the answer to the last: a
	// request due while every agent waits for one is a new agent's.
	idle := make(chan *agent, l.agents+n)
	for id := range l.agents {
		idle <- &agent{id: id}
	}
	agents := l.agents
	var mu sync.Mutex
	var out result
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		due := start.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(due))
		var a *agent
		select {
		case a = <-idle:
		default:
			a = &agent{id: agents}
			agents++
		}
		wg.Go(func() {
			session := fmt.Sprintf("agent-%d-%d", a.id, a.run)
			err := send(l.client, base, session, requestBody(a.id, a.turn, l.stream), l.stream)
			took := time.Since(due)
			if a.turn++; a.turn == l.turns {
				a.turn, a.run = 0, a.run+1
			}
			idle <- a
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				out.errors++
				return
			}
			out.times = append(out.times, took)
		})
	}
	wg.Wait()
	slices.Sort(out.times)
	out.agents = agents
	return out
}

// agent is a conversation's state: its turn in its run.
type agent struct{ id, run, turn int }

// send posts a chat request and reads its answer: whole, or to the first
// chunk of a stream, then the rest.
func send(client *http.Client, base, session string, body []byte, stream bool) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, base+guardproxy.ChatPath, strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(guardproxy.SessionHeader, session)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	if stream {
		// The time to first token: the first event's line.
		if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
			return err
		}
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// requestBody is an agent's request at a turn: its task, then a call and
// its result for each turn before.
func requestBody(agent, turn int, stream bool) []byte {
	msgs := []any{
		map[string]any{"role": "system", "content": "You are an SRE agent. Diagnose the incident and write agent_output.json."},
		map[string]any{"role": "user", "content": fmt.Sprintf("Incident %d: the checkout service returns 500s. Find the root cause.", agent)},
	}
	for range turn {
		n := len(msgs)
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call(n)}},
			map[string]any{"role": "tool", "tool_call_id": callID(n), "content": output(n)})
	}
	body, _ := json.Marshal(map[string]any{"model": "bench-model", "stream": stream, "messages": msgs})
	return body
}

// commands are what the agent runs, a different one each turn, as an
// agent does that investigates rather than loops.
var commands = []string{"get pods", "describe pod checkout", "logs checkout --tail 50", "get events --sort-by time", "get deploy checkout -o yaml",
	"get svc", "top pods", "rollout history deploy checkout", "get configmap checkout -o yaml", "logs payments --tail 50"}

var findings = []string{"CrashLoopBackOff", "OOMKilled", "connection refused to payments", "liveness probe failed", "image pull ok",
	"endpoints ready", "memory near limit", "revision changed at deploy", "timeout setting lowered", "payments healthy"}

// looping makes every turn's command and output the same.
var looping bool

// turnOf is the turn whose command a request of n messages gets answered
// with.
func turnOf(n int) int {
	if looping {
		return 0
	}
	return n / 2
}

// call is the tool call the upstream answers a request of n messages
// with, which the agent's next request carries.
func call(n int) map[string]any {
	cmd := commands[turnOf(n)%len(commands)]
	return map[string]any{"id": callID(n), "type": "function", "function": map[string]any{"name": "kubectl", "arguments": fmt.Sprintf(`{"cmd": %q}`, cmd)}}
}

// output is what the call of a request of n messages returned.
func output(n int) string {
	return fmt.Sprintf("checkout-7f9c: %s (turn %d)\n", findings[turnOf(n)%len(findings)], turnOf(n))
}

func callID(n int) string { return "call-" + strconv.Itoa(n) }

// upstream answers each request, after delay, with the tool call of its
// length; a stream gets its first chunk after delay and the rest at once.
func upstream(delay time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream   bool `json:"stream"`
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		// The agent's messages, its one system message, not what the
		// guard added (a system message), which the agent does not know of.
		n := 1
		for _, m := range req.Messages {
			if m.Role != "system" {
				n++
			}
		}
		c := call(n)
		time.Sleep(delay)
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{
				"object":  "chat.completion",
				"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{c}}, "finish_reason": "tool_calls"}},
				"usage":   map[string]any{"total_tokens": 100},
			})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		f := c["function"].(map[string]any)
		args := f["arguments"].(string)
		events := []any{
			map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": c["id"], "type": "function", "function": map[string]any{"name": f["name"], "arguments": ""}}}}}}},
			map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": args[:len(args)/2]}}}}}}},
			map[string]any{"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": args[len(args)/2:]}}}}}}},
		}
		for i, e := range events {
			raw, _ := json.Marshal(e)
			fmt.Fprintf(w, "data: %s\n\n", raw)
			if i == 0 {
				w.(http.Flusher).Flush()
			}
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	})
}

// serve serves h on a loopback port and returns its URL, and how to stop
// serving it.
func serve(h http.Handler) (string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		log.Fatal(err)
	}
	return u
}
