package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

// Whatever a query string holds, every page answers it with a page or a
// 4xx that says what is wrong: never a panic, never a 500.
func FuzzQueries(f *testing.F) {
	paths := []string{"/", "/traces", "/count", "/traces/019c22bd-d098-7f47-9e7d-8a330f6ddd22",
		"/traces/019c22bd-d098-7f47-9e7d-8a330f6ddd22/steps", "/traces/019c22bd-d098-7f47-9e7d-8a330f6ddd22/steps/7",
		"/agreement", "/labels", "/label/next", "/labels/export", "/report/md", "/report/json"}
	for i, q := range []string{
		"", "model=sim-beta&outcome=failure", "q=%22crash+loop%22+ku*", "q=NEAR(a+b)", "mode=FM-1.3&source=detector",
		"after=garbage", "before=eyJpZCI6IngifQ", "sort=steps&desc=1", "modes=2-3", "from=-5&dir=next", "from=99999&dir=prev",
		"step=7", "a=human:x&b=detector", "rater=detector&rater=judge", "by=scenario", "source=human:e2e&format=jsonl",
		"q=%00%ff", "modes=-1", "from=1e9", "raters=1&rater=mad",
	} {
		f.Add(uint8(i), q)
	}
	srv, err := New(Config{Store: examplesStore(f)})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, which uint8, query string) {
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+paths[int(which)%len(paths)], nil)
		req.URL.RawQuery = query
		req.Header.Set("HX-Request", "true")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Errorf("GET %s?%s: %d %.300s", req.URL.Path, query, rec.Code, rec.Body.String())
		}
	})
}

// Whatever a labelling form holds, it is stored or refused with what is
// wrong: never a panic, never a 500.
func FuzzLabelForm(f *testing.F) {
	f.Add("present", "1", "kubectl get pods", "asks twice", "absent")
	f.Add("present", "1, 1; #2", "", "", "")
	f.Add("unsure", "-3", "\x00", "<script>", "absent")
	f.Add("maybe", "99999999999999999999", "q", "", "present")
	f.Add("present", "2", "CrashLoopBackOff\n", "\xff", "absent")
	st := openStore(f)
	put(f, st, "/runs.jsonl", agentRun("a", "m1", false, "pod checkout-7 CrashLoopBackOff"))
	srv, err := New(Config{Store: st})
	if err != nil {
		f.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	prepared := newBrowser(f, ts.URL)
	prepared.name("fuzz")
	csrf := prepared.csrf()
	f.Fuzz(func(t *testing.T, verdict, steps, quote, note, rest string) {
		b := &browser{t: t, base: ts.URL, c: prepared.c}
		form := labelForm(csrf, map[string]string{"FM-1.3": verdict}, map[string][3]string{"FM-1.3": {steps, quote, note}})
		form.Set("rest", rest)
		if res := b.post("/traces/a/labels", form); res.StatusCode >= 500 {
			t.Errorf("%v: %s %.300s", form, res.Status, res.body)
		}
	})
}

// Whatever a step holds and a finding quotes, the trace page shows it:
// never a panic, never a 500.
func FuzzTracePage(f *testing.F) {
	f.Add("kubectl get pods\nCrashLoopBackOff", "get   pods", `{"cmd": "ls"}`)
	f.Add("bytes \xff\xfe here", "\xff\xfe", "")
	f.Add(strings.Repeat("line\n", 40), "line line", "<script>")
	f.Add("é\u2028x", "é x", "\x00")
	st := openStore(f)
	srv, err := New(Config{Store: st})
	if err != nil {
		f.Fatal(err)
	}
	n := 0
	f.Fuzz(func(t *testing.T, text, quote, args string) {
		n++
		id := fmt.Sprintf("t%d", n)
		tr := &trace.Trace{ID: id, Format: "codex", Source: "f.jsonl"}
		tr.Append(trace.Step{Kind: trace.KindToolCall, Tool: "shell", Args: args, CallID: "c"})
		tr.Append(trace.Step{Kind: trace.KindToolResult, Text: text, CallID: "c"})
		tr.Link()
		tr.Findings = []trace.Finding{{Mode: "FM-1.3", Source: "detector", Verdict: trace.Present, Steps: []int{0, 1}, Quote: quote}}
		put(t, st, "/"+id, tr)
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/traces/"+id, nil)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Errorf("text %q, quote %q: %d %.300s", text, quote, rec.Code, rec.Body.String())
		}
	})
}
