package web

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/discover"
	"github.com/faultline/faultline/trace"
)

// failedRun is an agent run whose shell call failed with text.
func failedRun(id, model, text string) *trace.Trace {
	tr := agentRun(id, model, false, "")
	exit := 1
	tr.Steps[2].ExitCode, tr.Steps[2].Text = &exit, text
	return tr
}

// The patterns page shows each pattern with its figures, its runs by
// model, quotes linked to their steps and its traces, for the traces the
// page's filters select; hostile text stays text.
func TestPatternsPage(t *testing.T) {
	st := openStore(t)
	const hostile = `<script>alert("x")</script> error`
	var traces []*trace.Trace
	for i := range 4 {
		traces = append(traces, failedRun(fmt.Sprintf("oom-%d", i), []string{"m1", "m2"}[i%2], fmt.Sprintf("Error: pod checkout-7d9f8c6b%d-x2k4q OOMKilled after %ds", i+5, 10*i)))
		traces = append(traces, failedRun(fmt.Sprintf("evil-%d", i), "m1", hostile))
	}
	for i := range 6 {
		traces = append(traces, agentRun(fmt.Sprintf("ok-%d", i), "m1", true, "all good"))
	}
	put(t, st, "/runs.jsonl", traces...)
	b := serve(t, Config{Store: st})

	page := b.ok("/patterns?kind=errors")
	if !strings.Contains(page, `aria-current="page">Patterns</a>`) {
		t.Error("the menu does not mark the page")
	}
	if strings.Count(page, `<article class="pattern"`) != 2 {
		t.Fatalf("want 2 patterns:\n%s", page)
	}
	id := discover.PatternID(discover.Signature{Kind: discover.KindError, Key: "shell", Template: "Error: pod checkout-<pod> OOMKilled after <num>s"})
	for _, want := range []string{
		`id="p-` + id + `"`, "4 of 8 (50%)", "0 of 6 (0%)", "only in failures",
		`<tr><td>m1</td><td>2</td><td>0</td></tr>`, `<tr><td>m2</td><td>2</td><td>0</td></tr>`,
		`<a href="/traces/oom-0?step=2">oom-0 step 2</a>`, `<q>Error: pod checkout-7d9f8c6b5-x2k4q OOMKilled after 0s</q>`,
		"14 traces: 8 failed, 6 succeeded, 0 left out",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if m := regexp.MustCompile(`<script>alert`).FindString(page); m != "" {
		t.Errorf("%q reached the page unescaped", m)
	}
	if !strings.Contains(page, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; error") {
		t.Error("the hostile error is not shown as text")
	}

	// The same view again is kept from the first.
	if again := b.ok("/patterns?kind=errors"); !strings.Contains(again, "kept from an earlier view of the unchanged database") {
		t.Error("the patterns were found again")
	}

	// A pattern's address shows it alone, with the page's filters.
	page = b.ok("/patterns?kind=errors&id=" + id[:6])
	if strings.Count(page, `<article class="pattern"`) != 1 || !strings.Contains(page, `id="p-`+id+`"`) ||
		!strings.Contains(page, `<a href="/patterns?kind=errors">every pattern of these traces</a>`) {
		t.Errorf("one pattern:\n%s", page)
	}
	if res := b.get("/patterns?id=ffffffffff"); res.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown pattern: %s", res.Status)
	}

	// The filters narrow the traces: m2 has two runs of one pattern.
	page = b.ok("/patterns?model=m2&kind=errors")
	if strings.Count(page, `<article class="pattern"`) != 1 || !strings.Contains(page, "2 traces: 2 failed, 0 succeeded") {
		t.Errorf("model m2:\n%s", page)
	}
	page = b.ok("/patterns?min-failed=9")
	if !strings.Contains(page, "No pattern: no signature is shared by 9 failed runs or more") {
		t.Errorf("min-failed 5:\n%s", page)
	}
	for _, path := range []string{"/patterns?kind=steps", "/patterns?min-failed=0", "/patterns?outcome=maybe"} {
		if res := b.get(path); res.StatusCode != http.StatusBadRequest {
			t.Errorf("GET %s: %s", path, res.Status)
		}
	}
}
