package web

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/faultline/faultline/trace"
)

// The example runs of incident 101 by sim-alpha (succeeded) and sim-beta
// (failed, with FM-1.3).
const (
	alphaRun = "019c22bd-d098-7f47-9e7d-8a330f6ddd22"
	betaRun  = "019c27e4-2c98-703d-8ddf-4d5566cecce7"
)

func TestComparePage(t *testing.T) {
	b := serve(t, Config{Store: examplesStore(t)})
	tests := []struct {
		name   string
		path   string
		htmx   bool
		status int
		want   []string
		not    []string
	}{
		{"two runs by prefix", "/compare?a=019c22bd&b=019c27e4", false, http.StatusOK, []string{
			`<h2>A <a class="id" href="/traces/` + alphaRun + `">`, `<h2>B <a class="id" href="/traces/` + betaRun + `">`,
			"<th>A · sim-alpha</th>", "<th>B · sim-beta</th>",
			`<span class="outcome o-success">success</span> success (root_cause_recall 1.00)`,
			`<span class="outcome o-failure">failure</span> failure (root_cause_recall 0.00)`,
			// sim-beta's FM-1.3 is not on sim-alpha's run: marked.
			`<span class="mode only" title="not found on the other run"><a class="mode-code" href="/modes/FM-1.3"`,
			"Tool calls: 4 the same, 2 similar, 3 only in A, 4 only in B.",
			`<tr class="m-exact k-call">`, `<tr class="m-only_b k-call">`, `<tr class="m-different k-closing">`,
			`<a href="/traces/` + alphaRun + `?step=6" class="stepref">#6</a> <code>ls -R …/101</code>`,
		}, nil},
		{"the box on the trace page", "/compare?a=" + alphaRun, true, http.StatusOK, []string{
			`<input type="hidden" name="a" value="` + alphaRun + `">`,
			// Runs by other models first.
			`or with: <a href="/compare?a=` + alphaRun + `&amp;b=019c27e4-`,
		}, []string{"<html", "/compare?a=" + alphaRun + "&amp;b=" + alphaRun}},
		{"the box as a page", "/compare?a=" + alphaRun, false, http.StatusOK, []string{"<html", `<h1><span class="muted">compare</span> ` + alphaRun}, nil},
		{"an unknown trace", "/compare?a=019c22bd&b=nosuch", false, http.StatusNotFound, []string{`trace "nosuch": not found`}, nil},
		{"an ambiguous prefix", "/compare?a=019c2&b=019c27e4", false, http.StatusBadRequest, []string{`a: trace "019c2" is ambiguous: matches ` + alphaRun}, nil},
		{"no trace", "/compare?b=019c27e4", false, http.StatusBadRequest, []string{"compare needs a"}, nil},
		{"the same trace twice", "/compare?a=019c22bd&b=" + alphaRun, false, http.StatusBadRequest, []string{"a and b are the same trace, " + alphaRun}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var header []string
			if tt.htmx {
				header = []string{"HX-Request", "true"}
			}
			res := b.get(tt.path, header...)
			if res.StatusCode != tt.status {
				t.Fatalf("%s: %s\n%.500s", tt.path, res.Status, res.body)
			}
			for _, want := range tt.want {
				if !strings.Contains(res.body, want) {
					t.Errorf("lacks %q:\n%s", want, res.body)
				}
			}
			for _, not := range tt.not {
				if strings.Contains(res.body, not) {
					t.Errorf("has %q", not)
				}
			}
		})
	}
	// At most 5 others, each of incident 101's other runs.
	box := b.get("/compare?a="+alphaRun, "HX-Request", "true").body
	if n := len(regexp.MustCompile(`href="/compare\?a=`).FindAllString(box, -1)); n != othersShown {
		t.Errorf("the box offers %d runs, want %d:\n%s", n, othersShown, box)
	}
	// The trace page loads the box.
	if page := b.ok("/traces/" + alphaRun); !strings.Contains(page, `<div class="compare-with" hx-get="/compare?a=`+alphaRun+`" hx-trigger="load"><a href="/compare?a=`+alphaRun+`">Compare with…</a></div>`) {
		t.Error("the trace page has no Compare with… box")
	}
}

// The runs the Compare with… box offers: of the same scenario (or, with
// none, the same task), the same task first, one run of each model before
// a second of any, the trace's own model after the others in each round.
func TestCompareOthers(t *testing.T) {
	run := func(id, model, scenario, task string) *trace.Trace {
		tr := agentRun(id, model, true, "ok")
		tr.Scenario, tr.Task = scenario, task
		return tr
	}
	tests := []struct {
		name   string
		traces []*trace.Trace // the first is compared
		want   string
	}{
		{"a scenario", []*trace.Trace{
			run("t", "m1", "1", "T"), run("a1", "m1", "1", "T"), run("a2", "m1", "1", "T"),
			run("b1", "m2", "1", "T"), run("b2", "m2", "1", "T"), run("b3", "m2", "1", "T"),
			run("c1", "m3", "1", "T"), run("d1", "m4", "1", "other task"), run("e1", "m5", "2", "T"),
		}, "[b1 c1 a1 b2 a2]"},
		{"no scenario: the same task", []*trace.Trace{
			run("t", "m1", "", "T"), run("a1", "m2", "", "T"), run("b1", "m2", "", "other task"),
		}, "[a1]"},
		{"alone", []*trace.Trace{run("t", "m1", "1", "T")}, "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openStore(t)
			for _, tr := range tt.traces {
				put(t, st, "/"+tr.ID+".jsonl", tr)
			}
			srv, err := New(Config{Store: st})
			if err != nil {
				t.Fatal(err)
			}
			others, err := srv.othersOf(context.Background(), tt.traces[0])
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, o := range others {
				ids = append(ids, o.ID)
			}
			if got := fmt.Sprint(ids); got != tt.want {
				t.Errorf("offers %s, want %s", got, tt.want)
			}
		})
	}
}

// What traces hold reaches the compare page as text only.
func TestCompareEscapes(t *testing.T) {
	st := openStore(t)
	const script = `<script>alert(1)</script>`
	a := agentRun("a", script, true, "ok")
	a.Steps[1].Args = `{"command": "echo '` + script + `' > /tmp/x/out.html"}`
	a.Findings = []trace.Finding{{Mode: "FM-1.3", Source: `judge:"><svg onload=alert(1)>`, Verdict: trace.Present}}
	bb := agentRun("b", `" onmouseover="alert(1)`, false, "ok")
	bb.Steps[0].Text = script
	put(t, st, "/a.jsonl", a)
	put(t, st, "/b.jsonl", bb)
	page := serve(t, Config{Store: st}).ok("/compare?a=a&b=b")
	if m := regexp.MustCompile(`(?i)<script>alert|<svg onload| onmouseover="alert`).FindString(page); m != "" {
		t.Errorf("%q reached the page unescaped", m)
	}
	for _, want := range []string{"echo &#39;&lt;script&gt;alert(1)&lt;/script&gt;&#39; &gt; …/out.html", "&lt;svg onload=alert(1)&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("lacks %q", want)
		}
	}
}

// In a browser at 1400 pixels: from a trace's page, compare it with
// another run of its incident; both columns show, side by side, and
// nothing overflows the page's width.
func TestCompareBrowser(t *testing.T) {
	ctx, ts, con := browse(t, examplesStore(t))
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/traces/"+alphaRun), chromedp.WaitVisible(chromedp.CSS(`.compare-with form input[name=b]`))); err != nil {
		t.Fatalf("the trace page's Compare with… box: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`.compare-with input[name=b]`), "019c27e4"),
		chromedp.Submit(chromedp.CSS(`.compare-with input[name=b]`)), chromedp.WaitVisible(chromedp.CSS(`table.compare`))); err != nil {
		t.Fatalf("comparing: %v", err)
	}
	screenshot(t, ctx, "compare")
	layout, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]float64](`(() => {
		const a = document.querySelector("#side-a").getBoundingClientRect();
		const b = document.querySelector("#side-b").getBoundingClientRect();
		const row = document.querySelector("table.compare tr.k-call");
		return {
			overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
			width: document.documentElement.clientWidth,
			sideBySide: a.top === b.top && a.right <= b.left ? 1 : 0,
			rows: document.querySelectorAll("table.compare tbody tr").length,
			cellsA: document.querySelectorAll("table.compare td.a .call").length,
			cellsB: document.querySelectorAll("table.compare td.b .call").length,
			columns: row.querySelector("td.a").getBoundingClientRect().right <= row.querySelector("td.b").getBoundingClientRect().left ? 1 : 0,
		};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if layout["width"] < 1300 || layout["overflow"] > 0 {
		t.Errorf("the page overflows its %.0f px by %.0f px", layout["width"], layout["overflow"])
	}
	// sim-alpha made 9 calls, sim-beta 10.
	if layout["sideBySide"] != 1 || layout["columns"] != 1 || layout["cellsA"] != 9 || layout["cellsB"] != 10 || layout["rows"] < 10 {
		t.Errorf("the columns: %v", layout)
	}
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.Contains(loc, "/compare?a="+alphaRun+"&b=019c27e4") {
		t.Errorf("the form led to %s", loc)
	}
	if p := con.problems(); len(p) > 0 {
		t.Errorf("the console reports:\n%s", strings.Join(p, "\n"))
	}
}
