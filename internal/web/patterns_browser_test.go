package web

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/faultline/faultline/trace"
)

// The Patterns page fits a desktop's width and a narrow window's, with
// long signatures of no spaces and long endings: nothing sticks out
// sideways. With FAULTLINE_SCREENSHOTS set to a directory, each width is
// saved there as patterns-WIDTH.png.
func TestPatternsFit(t *testing.T) {
	ctx := headless(t)
	st := openStore(t)
	long := "Error: " + strings.Repeat("x", 180) + "/" + strings.Repeat("y", 40)
	var traces []*trace.Trace
	for i := range 6 {
		tr := failedRun(fmt.Sprintf("long-%d", i), "model-with-a-rather-long-name-"+strings.Repeat("m", 30), long)
		tr.Steps[1].Tool = "mcp__offline_incident_analysis__" + strings.Repeat("t", 40)
		traces = append(traces, tr)
	}
	for i := range 6 {
		traces = append(traces, agentRun(fmt.Sprintf("ok-%d", i), "m1", true, "fine"))
	}
	put(t, st, "/long.jsonl", traces...)
	base := server(t, st)
	for _, width := range []int64{1400, 800} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 1000), chromedp.Navigate(base+"/patterns"),
			chromedp.WaitVisible(chromedp.CSS(`article.pattern`))); err != nil {
			t.Fatalf("%d: %v", width, err)
		}
		over, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](overflowScript))
		if err != nil {
			t.Fatal(err)
		}
		if len(over) > 0 {
			t.Errorf("the page at %d px overflows sideways:\n%s", width, strings.Join(over, "\n"))
		}
		if dir := os.Getenv("FAULTLINE_SCREENSHOTS"); dir != "" {
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("patterns-%d.png", width)), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
