package judge

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/faultline/faultline/internal/judge/judgetest"
	"github.com/faultline/faultline/internal/shared"
	"github.com/faultline/faultline/trace"
)

func TestRunJudgesStoresAndCaches(t *testing.T) {
	st := newMemStore(loadTraces(t, examples))
	srv := judgetest.NewServer(validScript)
	defer srv.Close()
	r := testRunner(t, srv, st, func(o *Options) { o.Price = &Price{Input: 2, Output: 8} })
	if err := r.Run(context.Background(), st.ids()); err != nil {
		t.Fatal(err)
	}
	n := len(st.traces)
	p := r.Progress()
	if p.Done != n || p.Failed != 0 || p.Calls != n || p.InputTokens != 1000*n || p.Cost == nil || *p.Cost != float64(n)*(2000+800)/1e6 {
		t.Errorf("progress %+v", p)
	}
	for id, tr := range st.traces {
		rec := st.records[id]
		if rec.Status != StatusOK || rec.Windows != 1 || rec.Samples != 1 || rec.Calls != 1 || rec.PromptVersion != r.Version() || rec.Summary == "" || rec.TaskSuccess != "failure" {
			t.Errorf("record %+v", rec)
		}
		fs := st.findings[id]
		if len(fs) != 14 {
			t.Fatalf("trace %s: %d findings, want 14 (absent verdicts included)", id, len(fs))
		}
		for _, f := range fs {
			if f.Source != "judge:fake-model" || f.Taxonomy != "mast-v3" {
				t.Errorf("finding %+v", f)
			}
			switch {
			case f.Mode == "FM-1.3" && (f.Verdict != trace.Present || len(f.Steps) == 0 || f.Quote == "" || f.Confidence != 0.9):
				t.Errorf("FM-1.3 finding %+v", f)
			case f.Mode != "FM-1.3" && (f.Verdict != trace.Absent || f.Steps != nil || f.Quote != ""):
				t.Errorf("%s finding %+v", f.Mode, f)
			}
			if err := f.CheckEvidence(tr); err != nil {
				t.Error(err)
			}
		}
	}
	// A second run skips everything; --force re-derives from the cache.
	srv.Reset()
	again := testRunner(t, srv, st, nil)
	if err := again.Run(context.Background(), st.ids()); err != nil {
		t.Fatal(err)
	}
	if p := again.Progress(); p.Skipped != n || p.Done != 0 || len(srv.Calls()) != 0 {
		t.Errorf("second run: %+v, %d calls", p, len(srv.Calls()))
	}
	forced := testRunner(t, srv, st, func(o *Options) { o.Force = true })
	if err := forced.Run(context.Background(), st.ids()); err != nil {
		t.Fatal(err)
	}
	if p := forced.Progress(); p.Done != n || p.CachedCalls != n || len(srv.Calls()) != 0 {
		t.Errorf("forced run: %+v, %d calls", p, len(srv.Calls()))
	}
}

// Each kind of bad answer gets exactly one corrective retry that names the
// problem; a good second answer is accepted.
func TestRunCorrectiveRetry(t *testing.T) {
	tests := []struct {
		name string
		bad  func(prompt string) string
		want string // in the corrective message
	}{
		{"malformed JSON", func(p string) string { return `{"modes": {"FM-1.1": {"present": tru}}, "summary": "x"}` }, "the JSON object is malformed: invalid character"},
		{"prose only", func(p string) string { return "The agent did fine." }, "holds no JSON object"},
		{"missing modes", func(p string) string {
			return strings.Replace(judgetest.ValidAnswer(p), `"FM-2.6"`, `"FM-2.6-typo"`, 1)
		}, "FM-2.6 is missing"},
		{"step that does not exist", func(p string) string {
			return judgetest.Answer(map[string]judgetest.Mode{"FM-2.3": {Present: true, Confidence: 0.5, Steps: []string{"S4000"}, Quote: "debugging the script", Explanation: "x"}})
		}, "FM-2.3: step S4000 does not exist"},
		{"quote that does not occur", func(p string) string {
			step, _ := judgetest.Evidence(p)
			return judgetest.Answer(map[string]judgetest.Mode{"FM-3.3": {Present: true, Confidence: 0.5, Steps: []string{step}, Quote: "verified that every alert cleared", Explanation: "x"}})
		}, `FM-3.3: the quote "verified that every alert cleared" does not occur in`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			traces := loadTraces(t, examples)[:2]
			st := newMemStore(traces)
			srv := judgetest.NewServer(func(c judgetest.Call) judgetest.Reply {
				if len(c.Messages) == 2 {
					return judgetest.Reply{Content: tt.bad(c.User())}
				}
				return validScript(c)
			})
			defer srv.Close()
			r := testRunner(t, srv, st, nil)
			if err := r.Run(context.Background(), st.ids()); err != nil {
				t.Fatal(err)
			}
			calls := srv.Calls()
			if len(calls) != 4 {
				t.Fatalf("%d calls, want 2 per trace", len(calls))
			}
			for _, c := range calls {
				if len(c.Messages) != 4 {
					continue
				}
				if c.Messages[2].Role != "assistant" || c.Last().Role != "user" || !strings.Contains(c.Last().Content, tt.want) ||
					!strings.HasPrefix(c.Last().Content, "Your answer could not be accepted:") {
					t.Errorf("corrective message:\n%s", c.Last().Content)
				}
			}
			for id := range st.traces {
				if rec := st.records[id]; rec.Status != StatusOK || rec.Calls != 2 {
					t.Errorf("record %+v", rec)
				}
			}
		})
	}
}

// An answer still wrong after the corrective retry is a recorded failure,
// with the problems, and no findings: never a silent "absent".
func TestRunRecordsFailure(t *testing.T) {
	traces := loadTraces(t, examples)[:3]
	st := newMemStore(traces)
	broken := traces[1].ID
	brokenPrompt := ""
	srv := judgetest.NewServer(func(c judgetest.Call) judgetest.Reply {
		if brokenPrompt == "" && c.N == 1 {
			brokenPrompt = c.User()
		}
		if c.User() == brokenPrompt {
			return judgetest.Reply{Content: strings.Replace(judgetest.Answer(nil), `"FM-1.4"`, `"FM-1.44"`, 1)}
		}
		return validScript(c)
	})
	defer srv.Close()
	r := testRunner(t, srv, st, func(o *Options) { o.Concurrency = 1 })
	if err := r.Run(context.Background(), []string{broken, traces[0].ID, traces[2].ID}); err != nil {
		t.Fatal(err)
	}
	rec := st.records[broken]
	if rec.Status != StatusFailed || !strings.Contains(rec.Error, "answer rejected after a corrective retry: ") || !strings.Contains(rec.Error, "FM-1.4 is missing") || rec.Calls != 2 {
		t.Errorf("record %+v", rec)
	}
	if len(st.findings[broken]) != 0 {
		t.Errorf("a failed judgement stored %d findings", len(st.findings[broken]))
	}
	if p := r.Progress(); p.Failed != 1 || p.Done != 3 || len(r.Failures()) != 1 || r.Failures()[0].Trace != broken {
		t.Errorf("progress %+v, failures %+v", p, r.Failures())
	}
	// The next run tries the failed trace again, and only it.
	srv.Reset()
	if err := testRunner(t, srv, st, nil).Run(context.Background(), st.ids()); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Calls()); n != 2 {
		t.Errorf("re-run made %d calls, want 2 (the failed trace, retried once)", n)
	}
}

func TestRunSamplesVote(t *testing.T) {
	traces := loadTraces(t, examples)[:2]
	st := newMemStore(traces)
	srv := judgetest.NewServer(func(c judgetest.Call) judgetest.Reply {
		step, quote := judgetest.Evidence(c.User())
		found := judgetest.Mode{Present: true, Confidence: 0.8, Steps: []string{step}, Quote: quote, Explanation: "Seen."}
		modes := map[string]judgetest.Mode{"FM-1.3": found}
		switch *c.Seed {
		case 7:
			modes["FM-2.3"] = found
			modes["FM-3.3"] = found
		case 8:
			modes["FM-3.3"] = found
		case 9:
			delete(modes, "FM-1.3")
		}
		return judgetest.Reply{Content: judgetest.Answer(modes)}
	})
	defer srv.Close()
	seed := 7
	r := testRunner(t, srv, st, func(o *Options) { o.Samples = 3; o.Seed = &seed })
	if err := r.Run(context.Background(), st.ids()); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Calls()); n != 6 {
		t.Fatalf("%d calls, want 3 samples x 2 traces", n)
	}
	for id := range st.traces {
		rec := st.records[id]
		if rec.Samples != 3 || rec.Agreement["FM-1.3"] < 0.66 || rec.Agreement["FM-1.3"] > 0.67 || rec.Agreement["FM-1.1"] != 1 {
			t.Errorf("record %+v", rec)
		}
		got := map[string]trace.Verdict{}
		for _, f := range st.findings[id] {
			got[f.Mode] = f.Verdict
			if f.Mode == "FM-2.3" && !strings.Contains(f.Explanation, "(1 of 3 samples found it)") {
				t.Errorf("FM-2.3 explanation %q", f.Explanation)
			}
		}
		if got["FM-1.3"] != trace.Present || got["FM-3.3"] != trace.Present || got["FM-2.3"] != trace.Absent || got["FM-1.1"] != trace.Absent {
			t.Errorf("verdicts %v", got)
		}
	}
	// Each sample has its own cache entry: asking for 3 again costs nothing.
	srv.Reset()
	if err := testRunner(t, srv, st, func(o *Options) { o.Samples = 3; o.Seed = &seed; o.Force = true }).Run(context.Background(), st.ids()); err != nil {
		t.Fatal(err)
	}
	if len(srv.Calls()) != 0 || len(st.cache) != 6 {
		t.Errorf("%d calls, %d cache entries", len(srv.Calls()), len(st.cache))
	}
}

func TestVoteTieIsUnsure(t *testing.T) {
	yes := &Answer{Modes: map[string]ModeAnswer{"FM-1.3": {Present: true, Steps: []int{4}, Quote: "q", Explanation: "e"}}, TaskSuccess: "success"}
	no := &Answer{Modes: map[string]ModeAnswer{}, TaskSuccess: "failure"}
	findings, agreement := verdicts([]*Answer{yes, no}, "judge:m")
	for _, f := range findings {
		if f.Mode == "FM-1.3" && (f.Verdict != trace.Unsure || agreement["FM-1.3"] != 0.5 || len(f.Steps) != 1) {
			t.Errorf("tie: %+v, agreement %v", f, agreement["FM-1.3"])
		}
	}
	if got := taskSuccess([]*Answer{yes, no}); got != "unknown" {
		t.Errorf("tied success guess = %q", got)
	}
	if got := taskSuccess([]*Answer{yes, no, yes}); got != "success" {
		t.Errorf("success guess = %q", got)
	}
}

// A long trace is judged window by window, each later window carrying the
// previous one's summary, and the record says how many windows there were.
func TestRunWindows(t *testing.T) {
	long := longTrace(t)
	st := newMemStore([]*trace.Trace{long})
	var summaries []string
	srv := judgetest.NewServer(func(c judgetest.Call) judgetest.Reply {
		summary := "Summary after call " + string(rune('A'+c.N-1)) + "."
		summaries = append(summaries, summary)
		answer := strings.Replace(judgetest.ValidAnswer(c.User()), "The agent investigated and wrote an answer.", summary, 1)
		return judgetest.Reply{Content: answer}
	})
	defer srv.Close()
	r := testRunner(t, srv, st, func(o *Options) { o.Budget = Budget{Context: 12000, Output: 2000} })
	if err := r.Run(context.Background(), st.ids()); err != nil {
		t.Fatal(err)
	}
	rec := st.records[long.ID]
	calls := srv.Calls()
	if rec.Status != StatusOK || rec.Windows < 4 || rec.Windows != len(calls) || rec.Summary != summaries[len(summaries)-1] {
		t.Fatalf("record %+v after %d calls", rec, len(calls))
	}
	for k, c := range calls[1:] {
		if !strings.Contains(c.User(), "SUMMARY OF THE EARLIER PARTS (written when judging them):\n"+summaries[k]+"\n") {
			t.Errorf("call %d does not carry the summary of call %d", k+2, k+1)
		}
	}
	// FM-1.3 is found in every window; the merge keeps the earliest.
	want, _ := judgetest.Evidence(calls[0].User())
	for _, f := range st.findings[long.ID] {
		if f.Mode == "FM-1.3" && (f.Verdict != trace.Present || "S"+strconv.Itoa(f.Steps[0]) != want) {
			t.Errorf("FM-1.3 %+v, want the first window's evidence at %s", f, want)
		}
	}
}

// Cancelling a run keeps what was finished; the next run completes the rest
// and never asks again about a finished trace.
func TestRunCancelThenResume(t *testing.T) {
	st := newMemStore(loadTraces(t, examples))
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	srv := judgetest.NewServer(func(c judgetest.Call) judgetest.Reply {
		if c.N == 5 {
			once.Do(cancel)
		}
		return validScript(c)
	})
	srv.Latency = 30 * time.Millisecond
	defer srv.Close()
	first := testRunner(t, srv, st, func(o *Options) { o.Concurrency = 2 })
	if err := first.Run(ctx, st.ids()); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	finished := map[string]bool{}
	for id, rec := range st.records {
		finished[id] = rec.Status == StatusOK
	}
	if len(finished) == 0 || len(finished) >= len(st.traces) {
		t.Fatalf("%d of %d traces finished before the cancel", len(finished), len(st.traces))
	}
	tok, _ := NewTokenizer("")
	donePrompts := map[string]bool{}
	for id := range finished {
		p, err := NewPreview(st.traces[id], tok, first.opt)
		if err != nil {
			t.Fatal(err)
		}
		donePrompts[p.Messages[1].Content] = true
	}
	srv.Reset()
	second := testRunner(t, srv, st, nil)
	if err := second.Run(context.Background(), st.ids()); err != nil {
		t.Fatal(err)
	}
	for _, c := range srv.Calls() {
		if donePrompts[c.User()] {
			t.Errorf("call %d asks again about a trace finished before the cancel", c.N)
		}
	}
	if p := second.Progress(); p.Skipped != len(finished) || p.Done != len(st.traces)-len(finished) || len(st.records) != len(st.traces) {
		t.Errorf("resumed: %+v, %d records", p, len(st.records))
	}
}

func TestRunStopsOnFatalError(t *testing.T) {
	st := newMemStore(loadTraces(t, examples))
	srv := judgetest.NewServer(func(judgetest.Call) judgetest.Reply {
		return judgetest.Reply{Status: 401, Body: `{"error":{"message":"Incorrect API key"}}`}
	})
	defer srv.Close()
	err := testRunner(t, srv, st, func(o *Options) { o.Concurrency = 2 }).Run(context.Background(), st.ids())
	if !errors.Is(err, ErrFatal) || len(st.records) != 0 || len(srv.Calls()) > 2 {
		t.Errorf("err %v, %d records, %d calls", err, len(st.records), len(srv.Calls()))
	}
}

// Every real ITBench rollout renders into a prompt whose steps can be cited
// and quoted: an answer built from what the prompt shows is accepted.
func TestRunRealRollouts(t *testing.T) {
	dir := shared.Path(t, "itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1")
	st := newMemStore(loadTraces(t, dir))
	srv := judgetest.NewServer(validScript)
	defer srv.Close()
	r := testRunner(t, srv, st, nil)
	if err := r.Run(context.Background(), st.ids()); err != nil {
		t.Fatal(err)
	}
	// Some rollouts are identical apart from their ids: their prompts are too,
	// and the cache answers the repeats.
	if p := r.Progress(); p.Failed != 0 || p.Done != len(st.traces) || p.Calls+p.CachedCalls != len(st.traces) || p.CachedCalls == 0 {
		t.Errorf("progress %+v, failures %v", p, r.Failures())
	}
	present := 0
	for _, fs := range st.findings {
		for _, f := range fs {
			if f.Verdict == trace.Present {
				present++
			}
		}
	}
	if present != len(st.traces) {
		t.Errorf("%d present findings on %d traces", present, len(st.traces))
	}
}

func TestProgressLine(t *testing.T) {
	cost := 3.4149
	p := Progress{Total: 500, Done: 120, Failed: 2, Skipped: 14, Calls: 240, CachedCalls: 12, InputTokens: 1234567, OutputTokens: 80123, Cost: &cost, Elapsed: 60 * time.Second}
	want := "judge: 120/500 traces, 2 failed, 14 already judged, ETA 3m10s, 240 calls (+12 cached), 1,234,567 in + 80,123 out tokens, $3.41"
	if got := p.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	p = Progress{Total: 3}
	if got := p.String(); got != "judge: 0/3 traces, ETA unknown, 0 calls, 0 in + 0 out tokens, cost unknown (no price for this model)" {
		t.Errorf("got %s", got)
	}
}
