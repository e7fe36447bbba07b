package web

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/faultline/faultline/internal/store/sqlite"

	"github.com/faultline/faultline/internal/score"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// Every page answers, with the headers every response carries.
func TestPages(t *testing.T) {
	st := examplesStore(t)
	gt, _, err := score.LoadPath("../../examples/itbench-zero/ground_truths.json", "")
	if err != nil {
		t.Fatal(err)
	}
	b := serve(t, Config{Store: st, GroundTruth: gt})
	list := b.ok("/traces")
	traces := links(list, "/traces/")
	if len(traces) != 12 {
		t.Fatalf("%d traces listed, want the 12 examples", len(traces))
	}
	id := strings.TrimPrefix(traces[0], "/traces/")
	for _, tc := range []struct {
		path, want string
	}{
		{"/", `<section id="prevalence">`},
		{"/?by=scenario&source=detector", "by scenario"},
		{"/?model=nobody", "No traces match these filters"},
		{"/traces?model=sim-beta&outcome=failure", `hx-get="/count?model=sim-beta&amp;outcome=failure"`},
		{"/traces/" + id, "Findings by source"},
		{"/traces/" + id + "/steps?from=0&dir=next", `id="step-0"`},
		{"/labels", "Who is labelling"},
		{"/agreement", "Two sources"},
	} {
		res := b.get(tc.path)
		if res.StatusCode != http.StatusOK || !strings.Contains(res.body, tc.want) {
			t.Errorf("GET %s: %s, want %q in\n%.2000s", tc.path, res.Status, tc.want, res.body)
		}
		for h, want := range map[string]string{
			"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'",
			"X-Content-Type-Options":  "nosniff",
			"X-Frame-Options":         "DENY",
			"Content-Type":            "text/html; charset=utf-8",
		} {
			if got := res.Header.Get(h); !strings.HasPrefix(got, want) {
				t.Errorf("GET %s: %s: %q, want %q", tc.path, h, got, want)
			}
		}
		if !strings.Contains(res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Errorf("GET %s: framing allowed", tc.path)
		}
		// No inline script or style: the policy would block it.
		if strings.Contains(res.body, "<script>") || strings.Contains(res.body, "<style") || strings.Contains(res.body, " style=") || strings.Contains(res.body, " onclick=") {
			t.Errorf("GET %s: inline script or style", tc.path)
		}
	}
	for path, typ := range map[string]string{
		"/static/htmx.min.js":        "text/javascript",
		"/static/web.js":             "text/javascript",
		"/static/web.css":            "text/css",
		"/static/report.css":         "text/css",
		"/static/htmx.LICENSE.txt":   "text/plain",
		"/traces/" + id + "/steps/0": "text/plain",
	} {
		res := b.get(path)
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), typ) || res.body == "" {
			t.Errorf("GET %s: %s %q", path, res.Status, res.Header.Get("Content-Type"))
		}
	}
	for path, status := range map[string]int{
		"/traces/nope":               http.StatusNotFound,
		"/traces?outcome=maybe":      http.StatusBadRequest,
		"/traces?mode=FM-9.9":        http.StatusBadRequest,
		"/traces?after=garbage":      http.StatusBadRequest,
		"/traces?q=%22%22":           http.StatusBadRequest,
		"/?by=colour":                http.StatusBadRequest,
		"/traces/" + id + "/steps":   http.StatusBadRequest,
		"/traces/" + id + "?step=-1": http.StatusBadRequest,
		"/static/nope.js":            http.StatusNotFound,
		"/traces?q=0%CE":             http.StatusBadRequest,
	} {
		if res := b.get(path); res.StatusCode != status {
			t.Errorf("GET %s: %s, want %d", path, res.Status, status)
		}
	}
	// Scored against the ground truth it was given, the diagnosis says what
	// each blamed entity matched.
	page := b.ok("/traces/" + id)
	if !strings.Contains(page, "ground-truth group") || !strings.Contains(page, "root_cause_recall") {
		t.Errorf("the trace page shows no scored diagnosis")
	}
	// Without the ground truth, the matches stored with the outcome show.
	page = serve(t, Config{Store: st}).ok("/traces/019c22bd-d098-7f47-9e7d-8a330f6ddd22")
	if !strings.Contains(page, "<th>ground-truth group</th>") || !strings.Contains(page, "<code>flagd-config</code>") {
		t.Errorf("the stored matches are not shown:\n%.4000s", page)
	}
}

// A figure of the dashboard links to exactly the traces it counts.
func TestDashboardLinks(t *testing.T) {
	b := serve(t, Config{Store: examplesStore(t)})
	page := b.ok("/")
	var cell string
	for _, l := range links(page, "/traces?") {
		q, _ := url.ParseQuery(strings.TrimPrefix(l, "/traces?"))
		if q.Get("model") == "sim-beta" && q.Get("mode") == "FM-1.3" && q.Get("outcome") == "" {
			cell = l
		}
	}
	// The examples' prevalence table: FM-1.3 on 3 of 4 sim-beta traces.
	if cell == "" || !strings.Contains(page, `<a href="`+strings.ReplaceAll(cell, "&", "&amp;")+`">3/4 75%</a>`) {
		t.Fatalf("no link from the sim-beta FM-1.3 cell (%q)", cell)
	}
	if n := rows(b.ok(cell)); n != 3 {
		t.Errorf("the cell's link lists %d traces, want 3", n)
	}
	// Filtered, the links keep the filter; a density bar asks for a count.
	page = b.ok("/?outcome=failure&source=detector")
	found := false
	for _, l := range links(page, "/traces?") {
		q, _ := url.ParseQuery(strings.TrimPrefix(l, "/traces?"))
		if q.Get("outcome") != "failure" || q.Get("source") != "detector" {
			t.Errorf("link %s lost the dashboard's filter", l)
		}
		if q.Get("modes") == "1" && q.Get("model") == "sim-gamma" {
			found = true
			if n := rows(b.ok(l)); n != 1 {
				t.Errorf("sim-gamma failures with one mode: %d listed, want 1", n)
			}
		}
	}
	if !found {
		t.Error("no density bar links to sim-gamma's failures with one mode")
	}
	if !strings.Contains(page, "5 traces") {
		t.Error("the dashboard does not cover the 5 failed traces only")
	}
}

// Filters, sorting and keyset pages over 130 traces.
func TestListFiltersAndPages(t *testing.T) {
	st := openStore(t)
	var traces []*trace.Trace
	for i := range 130 {
		model := []string{"alpha", "beta"}[i%2]
		tr := agentRun(fmt.Sprintf("run-%03d", i), model, i%3 == 0, fmt.Sprintf("pod checkout-%d CrashLoopBackOff", i))
		if i%5 == 0 {
			tr.Model = ""
		}
		if i%4 == 0 {
			tr.Findings = []trace.Finding{{Mode: "FM-1.3", Source: "detector", Detector: "x", Verdict: trace.Present, Steps: []int{1}}}
		}
		traces = append(traces, tr)
	}
	traces[77].Steps[2].Text = "OOMKilled while reading the heap profile"
	put(t, st, "/runs.jsonl", traces...)
	b := serve(t, Config{Store: st})

	var seen []string
	next := "/traces"
	for next != "" {
		page := b.ok(next)
		for _, l := range links(page, "/traces/run-") {
			seen = append(seen, strings.TrimPrefix(l, "/traces/"))
		}
		n := links(page, "/traces?")
		next = ""
		for _, l := range n {
			if strings.Contains(l, "after=") {
				next = l
			}
		}
		if len(seen) == 50 {
			// From the second page, back to the first.
			second := b.ok(next)
			var prev string
			for _, l := range links(second, "/traces?") {
				if strings.Contains(l, "before=") {
					prev = l
				}
			}
			if prev == "" || links(b.ok(prev), "/traces/run-")[0] != "/traces/run-000" {
				t.Errorf("no way back to the first page from the second (%q)", prev)
			}
		}
	}
	if len(seen) != 130 || seen[0] != "run-000" || seen[129] != "run-129" {
		t.Errorf("paging saw %d traces, %v … %v", len(seen), seen[:1], seen[len(seen)-1:])
	}
	for path, want := range map[string]int{
		"/traces?model=beta":                                  52, // odd, less the multiples of 5
		"/traces?model=%28unknown%29":                         26,
		"/traces?outcome=success":                             44,
		"/traces?mode=FM-1.3":                                 33,
		"/traces?mode=FM-1.3&source=judge":                    0,
		"/traces?modes=0&model=alpha":                         26,
		"/traces?q=oomkilled":                                 1,
		"/traces?q=crashloopbackoff+checkout&outcome=success": 44,
	} {
		page := b.ok(path)
		got := fmt.Sprintf(`<span class="count">%d traces</span>`, want)
		if want == 1 {
			got = `<span class="count">1 trace</span>`
		}
		if count := b.ok(strings.Replace(path, "/traces", "/count", 1)); count != got {
			t.Errorf("%s: counted %q, want %q", path, count, got)
		}
		if n := rows(page); n != min(want, pageSize) {
			t.Errorf("%s: %d rows, want %d", path, n, min(want, pageSize))
		}
	}
	// The search shows where it matched, with a link to the step.
	page := b.ok("/traces?q=oomkilled")
	if !strings.Contains(page, `<a href="/traces/run-077?step=2">step 2</a>: <mark>OOMKilled</mark> while reading the heap profile`) {
		t.Errorf("search hit not shown:\n%s", page)
	}
	// Sorted by steps, descending: the column's link reverses the order.
	page = b.ok("/traces?sort=steps")
	if !strings.Contains(page, `href="/traces?desc=1&amp;sort=steps"`) {
		t.Error("the steps column does not offer the reverse order")
	}
}

// A trace longer than a page: its steps come a page at a time, a call
// and its result side by side across the page's edge, a step reached by
// its number.
func TestLongTraceSteps(t *testing.T) {
	st := openStore(t)
	tr := &trace.Trace{ID: "long", Format: "codex", Source: "long.jsonl"}
	for i := range 450 {
		switch i {
		case 199:
			tr.Append(trace.Step{Kind: trace.KindToolCall, Tool: "shell", Args: `{"command": "edge call"}`, CallID: "edge"})
		case 200:
			tr.Append(trace.Step{Kind: trace.KindToolResult, Text: "edge result", CallID: "edge"})
		default:
			tr.Append(trace.Step{Kind: trace.KindMessage, Role: "assistant", Text: fmt.Sprintf("thought %d", i)})
		}
	}
	tr.Link()
	tr.Findings = []trace.Finding{{Mode: "FM-1.3", Source: "judge:m", Verdict: trace.Present, Steps: []int{5, 321}}}
	put(t, st, "/long.jsonl", tr)
	b := serve(t, Config{Store: st})
	page := b.ok("/traces/long")
	// The findings' step links: an anchor on this page, else the page that
	// holds the step; the detectors, which found nothing, still have a column.
	if !strings.Contains(page, `href="#step-5" class="stepref"`) || !strings.Contains(page, `href="/traces/long?step=321" class="stepref"`) {
		t.Error("the findings' step links do not reach their steps")
	}
	if !strings.Contains(page, `<th><span class="chip src-detector">detector</span></th>`) {
		t.Error("no detector column though the detectors ran")
	}
	if strings.Count(page, `<article class="step`) != 201 || !strings.Contains(page, `id="step-199"`) || strings.Contains(page, `id="step-200"`) ||
		!strings.Contains(page, "edge result") {
		t.Error("the first page is not steps 0–199 with the result of call 199 beside it (and without its id)")
	}
	if !strings.Contains(page, `hx-get="/traces/long/steps?from=200&amp;dir=next"`) || strings.Contains(page, "dir=prev") {
		t.Error("the first page does not offer the next one (only)")
	}
	next := b.ok("/traces/long/steps?from=200&dir=next")
	if strings.Contains(next, "<html") || !strings.Contains(next, `id="step-200"`) || !strings.Contains(next, `the result of <a href="/traces/long?step=199">call #199</a>`) ||
		!strings.Contains(next, `id="step-399"`) || !strings.Contains(next, "from=400&amp;dir=next") || strings.Contains(next, "dir=prev") {
		t.Errorf("the second page fragment is wrong:\n%.600s", next)
	}
	prev := b.ok("/traces/long/steps?from=200&dir=prev")
	if !strings.Contains(prev, "from=0&amp;dir=prev") || strings.Contains(prev, "dir=next") {
		t.Error("a page loaded above offers the wrong neighbour")
	}
	res := b.get("/traces/long?step=321")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/traces/long?from=200#step-321" {
		t.Errorf("jump to step 321: %s %s", res.Status, res.Header.Get("Location"))
	}
	if page := b.ok("/traces/long?from=400"); !strings.Contains(page, `id="step-449"`) || !strings.Contains(page, "from=200&amp;dir=prev") {
		t.Error("the last page")
	}
}

// The loopback server answers loopback names only, so that a page whose
// name was pointed at 127.0.0.1 cannot read it (DNS rebinding).
func TestLoopbackHostOnly(t *testing.T) {
	b := serve(t, Config{Store: openStore(t)})
	for host, status := range map[string]int{"evil.example": http.StatusMisdirectedRequest, "localhost:7474": http.StatusOK, "[::1]:7474": http.StatusOK, "127.0.0.1": http.StatusOK} {
		req, _ := http.NewRequest("GET", b.base+"/labels", nil)
		req.Host = host
		if res := b.do(req); res.StatusCode != status {
			t.Errorf("Host %s: %s, want %d", host, res.Status, status)
		}
	}
}

// With no pair asked for, the agreement page compares the first source
// that decides modes with the detectors: a source that only locates
// errors (Who&When's decisive errors) is passed over.
func TestAgreementDefaultPair(t *testing.T) {
	st := openStore(t)
	a := agentRun("a", "m1", false, "pod checkout-7 CrashLoopBackOff")
	a.Findings = []trace.Finding{
		{Source: "human:whowhen", Verdict: trace.Present, RawLabel: "decisive error", Steps: []int{1}},
		{Mode: "FM-1.3", Source: "mad:annotator_1", Verdict: trace.Present},
		{Mode: "FM-1.3", Source: "mad:annotator_2", Verdict: trace.Absent},
	}
	put(t, st, "/runs.jsonl", a)
	b := serve(t, Config{Store: st})
	page := b.ok("/agreement")
	if !strings.Contains(page, `<option selected>mad:annotator_1</option>`) || !strings.Contains(page, `id="pair-table"`) {
		t.Errorf("the default pair is not mad:annotator_1 against the detectors:\n%.3000s", page)
	}
}

// A diagnosis that blames nothing says so rather than showing an empty card.
func TestEmptyDiagnosis(t *testing.T) {
	st := openStore(t)
	a := agentRun("a", "m1", false, "all quiet")
	a.Diagnosis = &trace.Diagnosis{Source: "agent_output.json", Body: `{"entities": [], "propagations": []}`}
	put(t, st, "/runs.jsonl", a)
	b := serve(t, Config{Store: st})
	if page := b.ok("/traces/a"); !strings.Contains(page, "The diagnosis blames no entity.") {
		t.Errorf("the empty diagnosis is not said:\n%.3000s", page)
	}
}

// The dashboard keeps a report while the database is unchanged, per filter,
// and builds it again once anything is written: a label from the page, or
// traces another process ingests. The agreement page keeps its comparisons
// the same way.
func TestKeptPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.db")
	open := func() *sqlite.Store {
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	st := open()
	put(t, st, "/runs.jsonl", agentRun("a", "m1", false, "pod checkout-7 CrashLoopBackOff"), agentRun("b", "m2", true, "all running"))
	b := serve(t, Config{Store: st})
	const kept = "kept from an earlier view"
	view := func(path string, wantKept bool, wantTraces string) {
		t.Helper()
		page := b.ok(path)
		if strings.Contains(page, kept) != wantKept || !strings.Contains(page, wantTraces) {
			t.Errorf("GET %s: kept %v, want %v; want %q in\n%.600s", path, strings.Contains(page, kept), wantKept, wantTraces, page)
		}
	}
	view("/", false, "2 traces")
	view("/", true, "2 traces")
	view("/?model=m1", false, "1 trace ")
	view("/?model=m1", true, "1 trace ")
	view("/?by=scenario", false, "2 traces")

	b.name("alice")
	all := map[string]string{}
	for _, m := range taxonomy.MAST.Modes {
		all[m.Code] = "absent"
	}
	if res := b.post("/traces/a/labels", labelForm(b.csrf(), all, nil)); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("labelling: %s", res.Status)
	}
	view("/", false, "human:alice")
	view("/", true, "human:alice")
	view("/agreement?a=human:alice&b=detector", false, "FM-1.3 Step repetition")
	view("/agreement?b=detector&a=human:alice", true, "FM-1.3 Step repetition")

	put(t, open(), "/more.jsonl", agentRun("c", "m1", false, "OOMKilled"))
	view("/", false, "3 traces")
	view("/agreement?a=human:alice&b=detector", false, "FM-1.3 Step repetition")
}

// The dashboard's report downloads in the report's formats, for the same
// selection and grouping.
func TestReportDownloads(t *testing.T) {
	b := serve(t, Config{Store: examplesStore(t)})
	if page := b.ok("/?model=sim-beta&by=scenario"); !strings.Contains(page, `<a href="/report/md?by=scenario&amp;model=sim-beta" download>Markdown</a>`) {
		t.Error("the dashboard has no download of its report")
	}
	for format, want := range map[string]string{
		"md":   "# faultline cohort report: 4 traces by scenario",
		"text": "faultline cohort report: 4 traces by scenario",
		"json": `"schema": "faultline-report/1"`,
		"html": "<!DOCTYPE html>",
	} {
		res := b.get("/report/" + format + "?by=scenario&model=sim-beta")
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment") || !strings.Contains(res.body, want) {
			t.Errorf("%s: %s %q, want %q in %.200s", format, res.Status, res.Header.Get("Content-Disposition"), want, res.body)
		}
	}
	for _, path := range []string{"/report/pdf", "/report/md?by=colour", "/report/md?outcome=maybe"} {
		if res := b.get(path); res.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %s", path, res.Status)
		}
	}
}

// Two groups of the grouping compared side by side, as `faultline report
// --compare` sets them; the downloads carry the comparison.
func TestDashboardCompare(t *testing.T) {
	b := serve(t, Config{Store: examplesStore(t)})
	page := b.ok("/?compare=sim-alpha&compare=sim-gamma")
	if !strings.Contains(page, `<section id="compare">`) || !strings.Contains(page, "sim-alpha against sim-gamma") ||
		!strings.Contains(page, "<option selected>sim-gamma</option>") || !strings.Contains(page, "8 traces") {
		t.Errorf("no comparison of sim-alpha and sim-gamma:\n%.3000s", page)
	}
	// The two groups' figures link to their traces; those of both together
	// link nowhere, since no one filter of the list selects them.
	for _, l := range links(page, "/traces?") {
		if q, _ := url.ParseQuery(strings.TrimPrefix(l, "/traces?")); q.Get("model") == "" {
			t.Errorf("a link to traces of no one compared group: %s", l)
		}
	}
	if res := b.get("/report/json?compare=sim-alpha&compare=sim-gamma"); !strings.Contains(res.body, `"compare": {`) {
		t.Errorf("the download lacks the comparison: %.300s", res.body)
	}
	for path, want := range map[string]string{
		"/?compare=sim-alpha":                                 "pick two groups",
		"/?compare=sim-alpha&compare=nope":                    `no model named "nope" among these traces`,
		"/?compare=sim-alpha&compare=sim-alpha":               "two different groups",
		"/?model=sim-beta&compare=sim-alpha&compare=sim-beta": "there are: sim-beta",
	} {
		if res := b.get(path); res.StatusCode != http.StatusBadRequest || !strings.Contains(res.body, want) {
			t.Errorf("%s: %s %q, want %q", path, res.Status, res.body, want)
		}
	}
}

// A client that sends its headers or its body slowly, or keeps a
// connection idle, is cut off: the server's timeouts (here shortened) bound
// each connection.
func TestServeTimesOut(t *testing.T) {
	srv, err := New(Config{Store: openStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	srv.timeouts = timeouts{readHeader: 200 * time.Millisecond, read: 400 * time.Millisecond, write: 2 * time.Second, idle: 400 * time.Millisecond}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	for _, tc := range []struct {
		name, send string
	}{
		{"headers never finished", "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"},
		{"a body that never comes", "POST /labeller HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nname=al"},
		{"a connection kept idle", "GET /static/web.css HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"},
	} {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		conn.SetDeadline(start.Add(10 * time.Second))
		if _, err := io.WriteString(conn, tc.send); err != nil {
			t.Fatal(err)
		}
		// The client waits; the server must close the connection.
		if _, err := io.ReadAll(conn); err != nil {
			t.Errorf("%s: the connection was held: %v", tc.name, err)
		} else if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: closed only after %v", tc.name, d)
		}
		conn.Close()
	}
}

// The timeouts leave room for the largest and slowest legitimate exchanges.
func TestDefaultTimeouts(t *testing.T) {
	d := defaultTimeouts
	upload := time.Duration(maxUpload*8) * time.Second / 1_500_000 // a label file at 1.5 Mbit/s
	for _, tc := range []struct {
		what string
		ok   bool
	}{
		{"every timeout set", d.readHeader > 0 && d.read > 0 && d.write > 0 && d.idle > 0},
		{"headers within the whole request", d.readHeader <= d.read},
		{"the largest label file, sent slowly, within read", d.read >= upload},
		{"write covers the body, then a minute for the slowest page (11 s) and its sending", d.write >= d.read+time.Minute},
		{"slow clients cut off within minutes", d.read <= 5*time.Minute && d.write <= 10*time.Minute && d.idle <= 5*time.Minute},
	} {
		if !tc.ok {
			t.Errorf("%s: %+v", tc.what, d)
		}
	}
}
