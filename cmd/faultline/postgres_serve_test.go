package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/faultline/faultline/internal/store/postgres/pgtest"
)

// TestServeOnPostgres serves the same pages from a PostgreSQL database as
// from a SQLite file holding the same traces.
func TestServeOnPostgres(t *testing.T) {
	pg := &cli{t: t, db: pgtest.Database(t)}
	sq := newCLI(t)
	pages := map[*cli]map[string]string{}
	for _, c := range []*cli{sq, pg} {
		if _, errOut, code := c.run("", "analyze", "-q", examples); code != exitOK {
			t.Fatalf("analyze: %s", errOut)
		}
		ctx, cancel := context.WithCancel(context.Background())
		url, exit, stderr := c.serve(ctx, "--addr", "127.0.0.1:0")
		pages[c] = map[string]string{}
		for _, page := range []string{"", "traces", "traces?model=sim-beta&sort=steps&desc=1", "traces?q=flagd", "traces/019c22bd-d098-7f47-9e7d-8a330f6ddd22",
			"agreement", "count?search=flagd", "count?model=sim-beta"} {
			res, err := http.Get(url + page)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Errorf("/%s: %s", page, res.Status)
			}
			pages[c][page] = res.Status + "\n" + string(body)
		}
		cancel()
		if code := <-exit; code != exitOK {
			t.Errorf("serve: exit %d: %s", code, stderr.String())
		}
	}
	// The database's name, the port, the form tokens and the timings differ
	// by design.
	scrub := regexp.MustCompile(`postgres://\S+|` + regexp.QuoteMeta(sq.db) + `|127\.0\.0\.1:\d+|"X-CSRF-Token": \\?"[0-9a-f]+|name="csrf" value="[0-9a-f]+"|\d+(\.\d+)?(ms|s|µs)\b`)
	for page, want := range pages[sq] {
		if got := pages[pg][page]; scrub.ReplaceAllString(got, "…") != scrub.ReplaceAllString(want, "…") {
			t.Errorf("/%s differs: %s", page, firstDifference(scrub.ReplaceAllString(want, "…"), scrub.ReplaceAllString(got, "…")))
		}
	}
}
