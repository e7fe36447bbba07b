package judge_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline/faultline/internal/store/sqlite"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/judge"
	"github.com/faultline/faultline/internal/judge/judgetest"
	"github.com/faultline/faultline/internal/shared"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// tracesUnder reads the traces under path into memory.
func tracesUnder(tb testing.TB, path string) []*trace.Trace {
	traces, _, err := ingest.ReadAll(context.Background(), []string{path}, ingest.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return traces
}

// cohort stores n distinct traces made from the example cohort (each copy's
// first step is marked, so no two prompts are the same) in a new database.
func cohort(b *testing.B, n int) *sqlite.Store {
	ctx := context.Background()
	examples := tracesUnder(b, "../../examples")
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	sink, err := st.File(ctx, ingest.FileInfo{Path: "bench", Hash: "bench", Format: "codex"})
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		t := *examples[i%len(examples)]
		t.ID = fmt.Sprintf("bench-%04d", i)
		t.Steps = append([]trace.Step(nil), t.Steps...)
		t.Steps[0].Text += fmt.Sprintf("\n(copy %d)", i)
		if err := sink.Trace(ctx, &t); err != nil {
			b.Fatal(err)
		}
	}
	if err := sink.Close(ctx, ingest.FileResult{}); err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkJudge500 judges 500 traces through a fake endpoint that takes
// 200 ms per call, 32 at a time, and compares the wall time with the ideal
// (500 × 0.2 s / 32 = 3.1 s); then runs again at once, which must make no
// call. Run it with: go test -run '^$' -bench Judge500 -benchtime 1x ./judge/
func BenchmarkJudge500(b *testing.B) {
	const traces, concurrency, latency = 500, 32, 200 * time.Millisecond
	ideal := time.Duration(float64(latency) * traces / concurrency)
	srv := judgetest.NewServer(func(c judgetest.Call) judgetest.Reply {
		return judgetest.Reply{Content: judgetest.ValidAnswer(c.User()), InputTokens: 3000, OutputTokens: 400}
	})
	srv.Latency = latency
	defer srv.Close()
	tok, err := judge.NewTokenizer("")
	if err != nil {
		b.Fatal(err)
	}
	opt := judge.Options{Model: "bench", Concurrency: concurrency, Budget: judge.DefaultBudget, Render: judge.DefaultRender, HintSource: "detector"}
	client := func() *judge.OpenAI {
		return judge.NewOpenAI(judge.ClientOptions{BaseURL: srv.URL(), Format: judge.FormatSchema, Timeout: 30 * time.Second, Retries: 2,
			MinBackoff: 10 * time.Millisecond, MaxBackoff: time.Second, Conns: concurrency})
	}
	for b.Loop() {
		b.StopTimer()
		st := cohort(b, traces)
		list, err := st.List(context.Background(), store.Filter{})
		if err != nil {
			b.Fatal(err)
		}
		ids := make([]string, len(list))
		for i, s := range list {
			ids[i] = s.ID
		}
		srv.Reset()
		b.StartTimer()

		start := time.Now()
		r := judge.NewRunner(client(), st, tok, opt)
		if err := r.Run(context.Background(), ids); err != nil {
			b.Fatal(err)
		}
		wall := time.Since(start)

		b.StopTimer()
		if p := r.Progress(); p.Done != traces || p.Failed != 0 || p.Calls != traces {
			b.Fatalf("first run: %+v", p)
		}
		first := len(srv.Calls())
		again := judge.NewRunner(client(), st, tok, opt)
		if err := again.Run(context.Background(), ids); err != nil {
			b.Fatal(err)
		}
		second := len(srv.Calls()) - first
		if second != 0 {
			b.Errorf("the second run made %d calls", second)
		}
		st.Close()
		b.ReportMetric(wall.Seconds(), "wall-s")
		b.ReportMetric(wall.Seconds()/ideal.Seconds(), "x-ideal")
		b.ReportMetric(float64(second), "calls-2nd-run")
		b.StartTimer()
	}
}

// mastDefinitionsBytes is the size of the definitions and examples MAST's
// judge sends with every trace.
const mastDefinitionsBytes = 80 << 10

// BenchmarkPromptTokens compares, on the real ITBench rollouts, the prompt
// tokens faultline sends per trace with MAST's approach: the whole trace
// (every step in full, up to MAST's 1M-character head truncation) plus about
// 80 KB of definitions and examples, estimated with the same tokenizer as
// 80 KB of English prose of the kind in our own prompt.
func BenchmarkPromptTokens(b *testing.B) {
	dir := shared.Path(b, "itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1")
	traces := tracesUnder(b, dir)
	tok, err := judge.NewTokenizer("")
	if err != nil {
		b.Fatal(err)
	}
	prose := strings.Repeat(judge.SystemPrompt(), mastDefinitionsBytes/len(judge.SystemPrompt())+1)[:mastDefinitionsBytes]
	definitions := tok.Count(prose)
	opt := judge.Options{Model: "bench", Budget: judge.DefaultBudget, Render: judge.DefaultRender, HintSource: "detector"}
	for b.Loop() {
		ours, theirs, largestOurs, largestTheirs := 0, 0, 0, 0
		for _, t := range traces {
			p, err := judge.NewPreview(t, tok, opt)
			if err != nil {
				b.Fatal(err)
			}
			var whole strings.Builder
			for _, s := range t.Steps {
				whole.WriteString(s.Text)
				whole.WriteString(s.Args)
			}
			text := whole.String()
			if len(text) > 1_000_000 {
				text = text[:1_000_000]
			}
			mast := definitions + tok.Count(text)
			ours += p.Total()
			theirs += mast
			if mast > largestTheirs {
				largestOurs, largestTheirs = p.Total(), mast
			}
		}
		n := float64(len(traces))
		b.ReportMetric(float64(ours)/n, "ours-tokens/trace")
		b.ReportMetric(float64(theirs)/n, "mast-tokens/trace")
		b.ReportMetric(float64(theirs)/float64(ours), "mast/ours")
		b.ReportMetric(float64(largestOurs), "ours-largest")
		b.ReportMetric(float64(largestTheirs), "mast-largest")
		b.ReportMetric(float64(definitions), "mast-defs-tokens")
	}
}
