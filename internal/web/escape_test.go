package web

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

// Traces carry arbitrary tool output, model names and judge names: none of
// it may reach a page as markup, a script address or a broken attribute.
func TestHostileContentIsEscaped(t *testing.T) {
	st := openStore(t)
	const (
		id     = `x"><script>alert(1)</script>`
		script = `<script>alert("step")</script>`
		attr   = `" onmouseover="alert(1)" x="`
		js     = `javascript:alert(1)`
	)
	big := strings.Repeat("A", 1<<20) // a one-megabyte line
	tr := &trace.Trace{ID: id, Format: "codex", Source: "<b>file</b>.jsonl", Model: `<script>alert("model")</script>`,
		Scenario: `<svg onload=alert(1)>`, Task: `<img src=x onerror=alert(1)> do the task properly`}
	tr.Append(trace.Step{Kind: trace.KindMessage, Role: "user", Agent: attr, Text: script + "\n" + js + "\n" + attr})
	tr.Append(trace.Step{Kind: trace.KindToolCall, Tool: `<i>tool</i>`, Args: `{"url": "` + js + `"}`, CallID: "c"})
	tr.Append(trace.Step{Kind: trace.KindToolResult, Text: big + " the end " + script, CallID: "c", IsError: true})
	tr.Link()
	no := false
	tr.Outcomes = []trace.Outcome{{Source: `<b>o</b>`, Success: &no, Detail: script}}
	tr.Findings = []trace.Finding{
		{Mode: "FM-1.3", Source: `judge:"><svg onload=alert(1)>`, Verdict: trace.Present, Steps: []int{0}, Quote: script, Explanation: `<b>bold</b> ` + attr},
		{Mode: "FM-3.3", Source: "human:ann", Verdict: trace.Present, Steps: []int{2}, Quote: "the end " + script},
		{Mode: "", Source: "human:ann", Verdict: trace.Present, Steps: []int{1}, RawLabel: script},
	}
	put(t, st, "/evil.jsonl", tr, agentRun("plain", "m", true, "ok"))
	b := serve(t, Config{Store: st})
	b.name("ann")

	page := b.ok("/traces")
	href := links(page, "/traces/x")
	if len(href) != 1 {
		t.Fatalf("the hostile trace's link: %v", href)
	}
	pages := map[string]string{"list": page}
	for name, path := range map[string]string{
		"dashboard": "/", "by scenario": "/?by=scenario", "search": "/traces?q=alert", "by source": "/traces?source=judge",
		"trace": href[0], "steps": href[0] + "/steps?from=0&dir=next", "agreement": "/agreement?a=human:ann&b=judge",
		"labels": "/labels",
	} {
		pages[name] = b.ok(path)
	}
	if !strings.Contains(pages["trace"], "FM-3.3") || !strings.Contains(pages["trace"], "Your labels") {
		t.Fatal("the hostile trace's page is not the trace page")
	}
	banned := regexp.MustCompile(`(?i)<script>alert|<img src=x|<svg onload|<i>tool|<b>bold|<b>o</b>|<b>file| onmouseover="alert|href="javascript:|hx-[a-z]+="javascript:`)
	for name, body := range pages {
		if m := banned.FindString(body); m != "" {
			t.Errorf("%s: %q reached the page unescaped", name, m)
		}
	}
	trPage := pages["trace"]
	for _, want := range []string{
		"&lt;script&gt;alert(&#34;step&#34;)&lt;/script&gt;", // the step text
		"&lt;svg onload=alert(1)&gt;",                        // the scenario
		"&#34; onmouseover=&#34;alert(1)&#34; x=&#34;",       // an attribute-breaking agent name
		`<mark title="FM-1.3`,                                // the quote, marked
	} {
		if !strings.Contains(trPage, want) {
			t.Errorf("the trace page lacks %q", want)
		}
	}
	// The megabyte line is cut to show its quote, and offered whole.
	if len(trPage) > 3*bodyLimit || !strings.Contains(trPage, "1.0 MB before this not shown") || !strings.Contains(trPage, "show all 1.0 MB") ||
		!strings.Contains(trPage, `<mark title="FM-3.3 Incorrect verification · human:ann">the end &lt;script&gt;`) {
		t.Errorf("the long result: page of %d bytes", len(trPage))
	}
	whole := b.get(href[0] + "/steps/2")
	if whole.StatusCode != http.StatusOK || len(whole.body) != len(big)+len(" the end "+script) ||
		!strings.HasPrefix(whole.Header.Get("Content-Type"), "text/plain") || whole.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("the whole text: %s %q, %d bytes", whole.Status, whole.Header.Get("Content-Type"), len(whole.body))
	}
	frag := b.get(href[0]+"/steps/2", "HX-Request", "true")
	if banned.MatchString(frag.body) || !strings.Contains(frag.body, "the end &lt;script&gt;") || strings.Contains(frag.body, "show all") {
		t.Error("the whole text as a fragment")
	}
}

// A step whose text is not UTF-8 (a span attribute can carry any bytes) and
// a finding quoting it: the page shows both, the quote unmarked.
func TestQuoteNotUTF8(t *testing.T) {
	st := openStore(t)
	tr := &trace.Trace{ID: "raw", Format: "otlp-proto", Source: "raw.bin"}
	tr.Append(trace.Step{Kind: trace.KindMessage, Role: "assistant", Text: "bytes \xff\xfe here"})
	tr.Findings = []trace.Finding{{Mode: "FM-1.3", Source: "detector", Verdict: trace.Present, Steps: []int{0}, Quote: "\xff\xfe here"}}
	put(t, st, "/raw.bin", tr)
	b := serve(t, Config{Store: st})
	if page := b.ok("/traces/raw"); !strings.Contains(page, "FM-1.3") || !strings.Contains(page, "here") {
		t.Error("the step or its finding is missing")
	}
}
