package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// chromium finds the browser, or skips the test (fails it under CI, which
// installs it).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is required under CI (apt-get install chromium)")
	}
	t.Skip("chromium is not installed (apt-get install chromium); skipping the browser test")
	return ""
}

// headless starts a headless Chromium for the test. Without the network
// flags, a closed network makes it hang on its own background requests.
// A browser that exits before it listens (seen while every package's
// tests ran at once on two cores) is started again, up to twice; a
// browser that starts and then fails fails the test.
func headless(t *testing.T) context.Context {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1400, 1000),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	for attempt := 1; ; attempt++ {
		alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, append(opts, chromedp.UserDataDir(t.TempDir()))...)
		browser, cancelBrowser := chromedp.NewContext(alloc)
		err := chromedp.Do(browser) // starts it
		if err == nil {
			t.Cleanup(cancelAlloc)
			t.Cleanup(cancelBrowser)
			return browser
		}
		cancelBrowser()
		cancelAlloc()
		if attempt == 3 || !strings.Contains(err.Error(), "chrome failed to start") {
			t.Fatalf("starting Chromium (attempt %d): %v", attempt, err)
		}
		t.Logf("Chromium exited before it listened (attempt %d), starting it again: %v", attempt, err)
	}
}

// console keeps what the page writes to the console: errors, refused
// scripts and styles (the Content-Security-Policy reports there).
type console struct {
	mu   sync.Mutex
	msgs []string
}

func watchConsole(ctx context.Context) *console {
	c := &console{}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			c.mu.Lock()
			c.msgs = append(c.msgs, fmt.Sprintf("%s: %s (%s)", m.Type, m.Text, m.URL))
			c.mu.Unlock()
		}
	}()
	return c
}

// browse serves store's traces to a headless browser, watching its
// console: what every browser test starts with.
func browse(t *testing.T, st Store) (context.Context, *httptest.Server, *console) {
	t.Helper()
	ctx := headless(t)
	srv, err := New(Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ctx, ts, watchConsole(ctx)
}

func (c *console) problems() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, m := range c.msgs {
		if strings.HasPrefix(m, "error") || strings.HasPrefix(m, "exception") || strings.Contains(m, "Content Security Policy") {
			out = append(out, m)
		}
	}
	return out
}

// screenshot saves the page when FAULTLINE_SCREENSHOTS names a directory.
func screenshot(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("FAULTLINE_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// In a real browser, with the policy in force: open the dashboard, follow
// a figure to its traces, open a trace, label it (steps cited and a quote
// selected with the mouse's selection), and see the agreement table
// appear; and read a long trace page by page.
func TestBrowser(t *testing.T) {
	ctx, ts, con := browse(t, examplesStore(t))
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}

	do("the dashboard", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#prevalence svg a rect`)))
	screenshot(t, ctx, "dashboard")
	// A cell of the heat map: sim-beta's FM-1.3, three traces.
	do("a heat-map cell", chromedp.Click(chromedp.CSS(`#prevalence svg a[href*="mode=FM-1.3"][href*="model=sim-beta"] rect`)),
		chromedp.WaitVisible(chromedp.CSS(`table.list`)), chromedp.WaitNotPresent(chromedp.CSS(`span.count[hx-get]`)))
	if got := text("p.meta"); !strings.HasPrefix(got, "3 traces with FM-1.3") {
		t.Errorf("the heat-map cell leads to %q", got)
	}
	screenshot(t, ctx, "traces")

	// No labels of e2e yet: nothing to compare.
	do("agreement before", chromedp.Navigate(ts.URL+"/agreement?a=human:e2e&b=detector"), chromedp.WaitVisible(chromedp.CSS(`h1`)))
	if got := text("main"); !strings.Contains(got, `no annotations of source "human:e2e"`) {
		t.Errorf("agreement before labelling: %.300s", got)
	}

	// Name yourself, then take the first trace of the queue.
	do("naming", chromedp.Navigate(ts.URL+"/labels"),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "e2e"),
		chromedp.Click(chromedp.CSS(`form[action="/labeller"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/label/next"] button`)))
	do("the queue", chromedp.Click(chromedp.CSS(`form[action="/label/next"] button`)), chromedp.WaitVisible(chromedp.CSS(`#label-panel`)))
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if !strings.Contains(loc, "/traces/019c22bd-d098-7f47-9e7d-8a330f6ddd22?queue=") {
		t.Fatalf("the queue opened %s", loc)
	}
	// Pick FM-1.3, cite step 7, unfold its long output and select "alerts"
	// in it: the quote.
	do("citing", chromedp.Click(chromedp.CSS(`label.pick input[value="FM-1.3"]`)),
		chromedp.Click(chromedp.CSS(`#step-7 button.cite`)), chromedp.Click(chromedp.CSS(`#step-7 summary`)))
	selected, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const text = document.querySelector("#step-7 pre.txt").firstChild;
		const range = document.createRange();
		range.setStart(text, 0);
		range.setEnd(text, 6);
		const sel = window.getSelection();
		sel.removeAllRanges();
		sel.addRange(range);
		text.parentElement.dispatchEvent(new MouseEvent("mouseup", {bubbles: true}));
		return sel.toString();
	})()`))
	if err != nil || selected != "alerts" {
		t.Fatalf("selecting: %q, %v", selected, err)
	}
	steps, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`input[name="steps-FM-1.3"]`)))
	quote, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`textarea[name="quote-FM-1.3"]`)))
	present, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('input[name="v-FM-1.3"][value=present]').checked`))
	if steps != "7" || quote != "alerts" || !present {
		t.Errorf("the evidence: steps %q, quote %q, present %v", steps, quote, present)
	}
	do("the note", chromedp.SendKeys(chromedp.CSS(`input[name="note-FM-1.3"]`), "lists the snapshot twice"))
	screenshot(t, ctx, "labelling")
	do("saving", chromedp.Click(chromedp.CSS(`button[name=rest]`)), chromedp.WaitVisible(chromedp.CSS(`#label-panel p.ok`)))
	if got := text("#step-7"); !strings.Contains(got, "FM-1.3 Step repetition · human:e2e") {
		t.Errorf("the saved label is not at its step: %q", got)
	}
	screenshot(t, ctx, "trace")

	// The agreement table now has the labeller's row.
	do("agreement after", chromedp.Navigate(ts.URL+"/agreement?a=human:e2e&b=detector"), chromedp.WaitVisible(chromedp.CSS(`#pair-table`)))
	if got := text("#pair-table"); !strings.Contains(got, "FM-1.3 Step repetition") || !strings.Contains(got, "all modes (micro)") {
		t.Errorf("the agreement table: %q", got)
	}
	screenshot(t, ctx, "agreement")

	// A long trace: the next page of steps comes as the end is reached, and
	// a step far down is reached by its number.
	st := openStore(t)
	long := &trace.Trace{ID: "long", Format: "codex", Source: "long.jsonl"}
	for i := range 450 {
		long.Append(trace.Step{Kind: trace.KindMessage, Role: "assistant", Text: fmt.Sprintf("thought %d", i)})
	}
	put(t, st, "/long.jsonl", long)
	srv2, err := New(Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ts2 := httptest.NewServer(srv2)
	defer ts2.Close()
	do("a long trace", chromedp.Navigate(ts2.URL+"/traces/long"), chromedp.WaitVisible(chromedp.CSS(`#step-199`)),
		chromedp.ScrollIntoView(chromedp.CSS(`a.more`)), chromedp.WaitVisible(chromedp.CSS(`#step-399`)))
	do("jumping", chromedp.SendKeys(chromedp.CSS(`form.jump input`), "420"), chromedp.Submit(chromedp.CSS(`form.jump input`)),
		chromedp.WaitVisible(chromedp.CSS(`#step-420`)))
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.HasSuffix(loc, "/traces/long?from=400#step-420") {
		t.Errorf("jumped to %s", loc)
	}

	if p := con.problems(); len(p) > 0 {
		t.Errorf("the console reports:\n%s", strings.Join(p, "\n"))
	}
}

// twelveModels is a cohort of twelve models, long names among them, each
// with successes and failures, detector findings, and a labeller's verdict
// on every mode that disagrees with the detectors here and there: the
// widest dashboard and agreement page a small cohort makes.
func twelveModels(t *testing.T) Store {
	st := openStore(t)
	models := []string{"claude-opus-4.5", "gpt-5.1-codex", "gemini-3-pro-preview", "qwen3-coder-480b-a35b-instruct", "deepseek-v3.2",
		"llama-4-maverick", "gpt-oss-120b", "mistral-large-3", "kimi-k2-thinking", "glm-4.6", "grok-4-fast-reasoning", "minimax-m2"}
	var traces []*trace.Trace
	for i, model := range models {
		for j := range 6 {
			tr := agentRun(fmt.Sprintf("%s-%d", model, j), model, (i+j)%3 != 0, "pods: checkout CrashLoopBackOff")
			for k, m := range taxonomy.MAST.Modes {
				present := (i*7+j*3+k)%5 == 0
				if present {
					tr.Findings = append(tr.Findings, trace.Finding{Mode: m.Code, Source: "detector", Detector: "x", Verdict: trace.Present, Steps: []int{1 + k%3}})
				}
				if (i+j+k)%11 == 0 { // the labeller sees it otherwise
					present = !present
				}
				v := trace.Absent
				if present {
					v = trace.Present
				}
				tr.Findings = append(tr.Findings, trace.Finding{Mode: m.Code, Source: "human:ann", Verdict: v})
			}
			traces = append(traces, tr)
		}
	}
	put(t, st, "/twelve.jsonl", traces...)
	return st
}

// The dashboard and agreement pages fit the window, at a desktop's width
// and a narrow one, with twelve models: wide tables and charts scroll or
// shrink inside their cards, and the page itself never scrolls sideways.
func TestBrowserFits(t *testing.T) {
	ctx, ts, con := browse(t, twelveModels(t))
	pages := []struct{ name, path, ready string }{
		{"dashboard", "/", "#headline"},
		{"agreement", "/agreement", "#pair-table"},
	}
	for _, width := range []int64{1400, 800} {
		for _, p := range pages {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900), chromedp.Navigate(ts.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.ready))); err != nil {
				t.Fatalf("%s at %d px: %v", p.path, width, err)
			}
			fits, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, document.documentElement.clientWidth]`))
			if err != nil {
				t.Fatal(err)
			}
			if fits[0] > fits[1] {
				t.Errorf("%s at %d px: the page is %d px wide in a window of %d", p.path, width, fits[0], fits[1])
			}
			screenshot(t, ctx, fmt.Sprintf("fits-%s-%d", p.name, width))
		}
	}
	// The headline names what it found, and the agreement page reads the
	// detectors against the labeller by default.
	if got, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#pair-table`))); !strings.Contains(got, "all modes (micro)") {
		t.Errorf("the agreement table: %q", got)
	}
	if got, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`select[name=b]`))); got != "human:ann" {
		t.Errorf("the default reference is %q, want the labeller", got)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#headline`))); err != nil {
		t.Fatal(err)
	}
	// (Its labels are upper case on screen.)
	if got, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#headline`))); !strings.Contains(got, "72") || !strings.Contains(got, "in 12 models") || !strings.Contains(strings.ToLower(got), "biggest difference between models") {
		t.Errorf("the headline: %q", got)
	}
	if p := con.problems(); len(p) > 0 {
		t.Errorf("the console reports:\n%s", strings.Join(p, "\n"))
	}
}
