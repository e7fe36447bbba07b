package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/pipeline"
	"github.com/faultline/faultline/trace"
)

// overflowScript lists what sticks out of the viewport sideways: the
// document itself when it scrolls horizontally, and any element reaching
// past either edge that no ancestor clips or scrolls (a table in a
// scrolling box may be wider than the page; its page may not).
const overflowScript = `(() => {
  const vw = document.documentElement.clientWidth;
  const out = [];
  if (document.documentElement.scrollWidth > vw) {
    out.push("the document is " + document.documentElement.scrollWidth + " px wide");
  }
  const contained = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (["auto", "scroll", "hidden", "clip"].includes(getComputedStyle(a).overflowX)) return true;
    }
    return false;
  };
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || (r.left >= -0.5 && r.right <= vw + 0.5) || contained(el)) continue;
    const name = el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "");
    out.push(name + " spans " + Math.round(r.left) + " to " + Math.round(r.right) + " px");
    if (out.length >= 10) break;
  }
  return out;
})()`

// underPanelScript lists the parts of the steps that reach under the
// labelling panel beside them.
const underPanelScript = `(() => {
  const side = document.querySelector("aside.side");
  if (!side) return ["no labelling panel"];
  const edge = side.getBoundingClientRect().left;
  const out = [];
  for (const el of document.querySelectorAll(".timeline-col *")) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > edge + 0.5) out.push(el.tagName.toLowerCase() + "." + String(el.className) + " ends at " + Math.round(r.right) + " px, the panel starts at " + Math.round(edge));
    if (out.length >= 10) break;
  }
  return out;
})()`

// server serves a store on a loopback test server and returns its address.
func server(t *testing.T, st Store) string {
	srv, err := New(Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts.URL
}

// wideRun is a trace of what overflows a careless layout: a command of one
// long line, an output of one longer line without a space, JSON
// arguments, a multi-agent name.
func wideRun() *trace.Trace {
	tr := &trace.Trace{ID: "wide", Format: "codex", Source: "wide.jsonl", Model: "m", Task: strings.Repeat("investigate ", 40)}
	at := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
	tr.Append(trace.Step{Kind: trace.KindMessage, Role: "user", Text: "Begin", Time: at})
	tr.Append(trace.Step{Kind: trace.KindToolCall, Role: "assistant", Tool: "shell", CallID: "c1", Time: at.Add(2 * time.Second), Tokens: 40,
		Args: `{"command":["bash","-lc","grep -rn ` + strings.Repeat("x", 600) + ` /var/log"],"workdir":"/srv/` + strings.Repeat("d", 150) + `"}`})
	exit := 1
	tr.Append(trace.Step{Kind: trace.KindToolResult, Role: "tool", Tool: "shell", CallID: "c1", ExitCode: &exit, Time: at.Add(5 * time.Second), Text: strings.Repeat("0123456789abcdef", 300)})
	tr.Append(trace.Step{Kind: trace.KindToolCall, Role: "assistant", Agent: strings.Repeat("planner-", 20), Tool: "lookup", CallID: "c2", Time: at.Add(6 * time.Second),
		Args: `{"query":"` + strings.Repeat("q", 400) + `","limit":5}`})
	tr.Append(trace.Step{Kind: trace.KindToolResult, Role: "tool", Tool: "lookup", CallID: "c2", Time: at.Add(7 * time.Second), Text: "[" + strings.Repeat(`{"k":"v"},`, 200) + "{}]"})
	tr.Append(trace.Step{Kind: trace.KindFinal, Role: "assistant", Text: strings.Repeat("done ", 10), Time: at.Add(8 * time.Second)})
	tr.Link()
	return tr
}

// The pages people see first, at a desktop's width and a narrow window's:
// nothing may stick out sideways, and the steps may not run under the
// labelling panel. With FAULTLINE_SCREENSHOTS set to a directory, each
// view is saved there as NAME-WIDTH.png (the README's pictures).
func TestScreens(t *testing.T) {
	ctx := headless(t)
	st := examplesStore(t)
	sink := pipeline.Detecting(st, detect.All, func(err error) { t.Error(err) })
	if _, err := ingest.Paths(context.Background(), []string{"../../ingest/testdata/samples/otlp/claims-triage.json"}, sink, ingest.Options{Report: func(ingest.Issue) {}}); err != nil {
		t.Fatal(err)
	}
	examples := server(t, st)
	// The wide run has a store of its own, out of the pictures' cohort.
	wide := openStore(t)
	put(t, wide, "/wide.jsonl", wideRun())
	stress := server(t, wide)
	dir := os.Getenv("FAULTLINE_SCREENSHOTS")

	// The views with the labelling panel come last: naming the labeller
	// shows on every page after.
	views := []struct {
		name, base, path, ready string
		scroll                  string // what to scroll to before the picture
		labelling               bool   // with the labelling panel open beside the steps
		picture                 bool   // saved with FAULTLINE_SCREENSHOTS
	}{
		{"dashboard", examples, "/", "#prevalence svg", "", false, true},
		{"trace", examples, "/traces/019c2d0a-8898-7b17-81ca-dd172ea4b6a4", "#waterfall table", "", false, true},
		{"trace-steps", examples, "/traces/019c2d0a-8898-7b17-81ca-dd172ea4b6a4", "#waterfall table", "#waterfall", false, true},
		{"trace-otel", examples, "/traces/7a3e91c04d2b58f6e1c0a9b83d4f2e61", "#waterfall table", "", false, true},
		{"modes", examples, "/modes", "article.mode-card", "", false, true},
		{"wide", stress, "/traces/wide", "#step-2", "", false, false},
		{"wide-labelling", stress, "/traces/wide", "#label-panel", "", true, false},
	}
	named := false
	for _, v := range views {
		for _, width := range []int64{1400, 800} {
			name := fmt.Sprintf("%s-%d", v.name, width)
			if v.labelling && !named {
				if err := chromedp.Do(ctx, chromedp.Navigate(v.base+"/labels"),
					chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "screens"),
					chromedp.Click(chromedp.CSS(`form[action="/labeller"] button`)),
					chromedp.WaitVisible(chromedp.CSS(`form[action="/label/next"] button`))); err != nil {
					t.Fatalf("naming the labeller: %v", err)
				}
				named = true
			}
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 1000), chromedp.Navigate(v.base+v.path),
				chromedp.WaitVisible(chromedp.CSS(v.ready))); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			over, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](overflowScript))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(over) > 0 {
				t.Errorf("%s overflows sideways:\n%s", name, strings.Join(over, "\n"))
			}
			if v.labelling && width == 1400 {
				// At 1400 px the panel is beside the steps (below them when narrower).
				under, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](underPanelScript))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if len(under) > 0 {
					t.Errorf("%s: steps run under the labelling panel:\n%s", name, strings.Join(under, "\n"))
				}
			}
			if dir != "" && v.picture {
				if v.scroll != "" {
					if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(v.scroll))); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
				}
				png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}
