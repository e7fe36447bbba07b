package web

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/pipeline"

	"github.com/faultline/faultline/internal/store/sqlite"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/score"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// openStore is an empty store of the test's own.
func openStore(t testing.TB) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// put stores traces as one file, as run through the current detectors.
func put(t testing.TB, st *sqlite.Store, file string, traces ...*trace.Trace) {
	t.Helper()
	ctx := context.Background()
	for _, tr := range traces {
		tr.DetectedWith = detect.Version(detect.All)
	}
	if _, err := ingest.StoreFile(ctx, st, ingest.FileInfo{Path: file, Hash: file, Format: "codex"}, traces...); err != nil {
		t.Fatal(err)
	}
}

// agentRun builds a trace of a user message, a call and its result, and a
// final answer, with an outcome.
func agentRun(id, model string, success bool, result string) *trace.Trace {
	tr := &trace.Trace{ID: id, Format: "codex", Source: id + ".jsonl", System: "sys", Model: model, Scenario: "1", Trial: "1", Task: "Find the root cause of the incident."}
	tr.Append(trace.Step{Kind: trace.KindMessage, Role: "user", Text: "Begin investigation"})
	tr.Append(trace.Step{Kind: trace.KindToolCall, Role: "assistant", Tool: "shell", Args: `{"command": "kubectl get pods"}`, CallID: "c1"})
	exit := 0
	tr.Append(trace.Step{Kind: trace.KindToolResult, Role: "tool", Text: result, CallID: "c1", ExitCode: &exit})
	tr.Append(trace.Step{Kind: trace.KindFinal, Role: "assistant", Text: "The checkout service is the root cause."})
	tr.Link()
	score := 0.0
	if success {
		score = 1
	}
	tr.Outcomes = []trace.Outcome{{Source: "itbench", Metric: "root_cause_recall", Score: &score, Success: &success}}
	return tr
}

// examplesStore holds the bundled example cohort, ingested, run through
// the detectors and scored, as `faultline analyze examples/` leaves it.
func examplesStore(t testing.TB) *sqlite.Store {
	t.Helper()
	ctx := context.Background()
	st := openStore(t)
	sink := pipeline.Detecting(st, detect.All, func(err error) { t.Error(err) })
	if _, err := ingest.Paths(ctx, []string{"../../examples"}, sink, ingest.Options{Report: func(i ingest.Issue) {}}); err != nil {
		t.Fatal(err)
	}
	gt, _, err := score.LoadPath("../../examples/itbench-zero/ground_truths.json", "")
	if err != nil {
		t.Fatal(err)
	}
	traces, err := st.List(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.ScoreStored(ctx, st, pipeline.ScoreRequest{Traces: traces, GroundTruth: gt, Metric: "recall", Threshold: 1}); err != nil {
		t.Fatal(err)
	}
	return st
}

// browser is a client with cookies, like a browser's.
type browser struct {
	t    testing.TB
	base string
	c    *http.Client
}

// serve starts the application on a loopback test server.
func serve(t testing.TB, cfg Config) *browser {
	t.Helper()
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return newBrowser(t, ts.URL)
}

func newBrowser(t testing.TB, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type response struct {
	*http.Response
	body string
}

func (b *browser) do(req *http.Request) response {
	b.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return response{res, string(body)}
}

func (b *browser) get(path string, header ...string) response {
	b.t.Helper()
	req, err := http.NewRequest("GET", b.base+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(req)
}

// ok gets a page that must answer 200.
func (b *browser) ok(path string) string {
	b.t.Helper()
	res := b.get(path)
	if res.StatusCode != http.StatusOK {
		b.t.Fatalf("GET %s: %s\n%s", path, res.Status, res.body)
	}
	return res.body
}

func (b *browser) post(path string, form url.Values, header ...string) response {
	b.t.Helper()
	req, err := http.NewRequest("POST", b.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(req)
}

var csrfPattern = regexp.MustCompile(`"X-CSRF-Token": "([0-9a-f]{64})"`)

// csrf is the CSRF token a page of the application gives this browser.
func (b *browser) csrf() string {
	b.t.Helper()
	m := csrfPattern.FindStringSubmatch(b.ok("/labels"))
	if m == nil {
		b.t.Fatal("no CSRF token on the page")
	}
	return m[1]
}

// name names the labeller.
func (b *browser) name(name string) {
	b.t.Helper()
	res := b.post("/labeller", url.Values{"csrf": {b.csrf()}, "name": {name}, "back": {"/labels"}})
	if res.StatusCode != http.StatusSeeOther {
		b.t.Fatalf("naming the labeller: %s %s", res.Status, res.body)
	}
}

// links lists the targets of the page's links whose address starts with
// prefix, unescaped as a browser reads them.
func links(page, prefix string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		href := strings.ReplaceAll(m[1], "&amp;", "&")
		if strings.HasPrefix(href, prefix) {
			out = append(out, href)
		}
	}
	return out
}

// rows counts the trace rows of a list page.
func rows(page string) int { return strings.Count(page, `<td class="id">`) }
