package web

import (
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

// A code of the user's own rules is reported under its name, on the
// dashboard and the trace page, and the report's link to its traces lists
// them.
func TestCustomCodes(t *testing.T) {
	st := openStore(t)
	failed := agentRun("t-failed", "m1", false, "error: connection refused")
	failed.Findings = []trace.Finding{{Mode: "OPS-1", Source: trace.DetectorSource, Detector: "shell-failed", Taxonomy: "custom",
		Verdict: trace.Present, Steps: []int{2}, Quote: "connection refused", Confidence: 0.8}}
	put(t, st, "a.jsonl", failed, agentRun("t-ok", "m1", true, "pods running"))
	b := serve(t, Config{Store: st, CodeNames: map[string]string{"OPS-1": "Shell command failed"}})

	page := b.ok("/")
	if !strings.Contains(page, "OPS-1 Shell command failed") {
		t.Fatal("the report does not name the rule's code")
	}
	link := regexp.MustCompile(`href="(/traces\?[^"]*mode=OPS-1[^"]*)"`).FindStringSubmatch(page)
	if link == nil {
		t.Fatal("no link to the traces with the rule's code")
	}
	list := b.ok(html.UnescapeString(link[1]))
	if !strings.Contains(list, "t-failed") || strings.Contains(list, "t-ok") {
		t.Errorf("the traces with OPS-1 are not the failed one alone")
	}
	if page := b.ok("/traces/t-failed"); !strings.Contains(page, "Shell command failed") {
		t.Error("the trace page does not name the rule's code")
	}
	for _, mode := range []string{"ops-1", "FM-9.9", "SYS-99"} {
		if r := b.get("/traces?mode=" + mode); r.StatusCode != http.StatusBadRequest {
			t.Errorf("mode %s, no code: status %d", mode, r.StatusCode)
		}
	}
}
