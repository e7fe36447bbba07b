package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/judge/judgetest"
	"github.com/faultline/faultline/internal/shared"
	"github.com/faultline/faultline/internal/store/postgres/pgtest"
)

// TestCommandsOnPostgres runs the commands on a PostgreSQL database and on
// a SQLite file, the same arguments in the same order, and expects the
// same output from both: the backend is the user's choice, not a change of
// answers.
func TestCommandsOnPostgres(t *testing.T) {
	t.Setenv("FAULTLINE_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	pg := &cli{t: t, db: pgtest.Database(t)}
	sq := newCLI(t)
	srv := judgetest.NewServer(validReply)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	labelFile, baseline := filepath.Join(dir, "labels.csv"), filepath.Join(dir, "baseline.json")
	const alpha, beta = "019c22bd-d098-7f47-9e7d-8a330f6ddd22", "019c22e2-9a90-78aa-b902-da6042133947"
	if err := os.WriteFile(labelFile, []byte("trace,mode,present,steps,quote,note\n"+alpha+",FM-1.3,true,,,\n"+beta+",FM-1.3,false,,,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// What differs between the two by design: where the database is, and
	// when and how long things took.
	scrub := regexp.MustCompile(`postgres://\S+|` + regexp.QuoteMeta(sq.db) + `|\d+(\.\d+)?(ms|s|µs)\b|"judged_at": "[^"]*"`)
	for _, args := range [][]string{
		{"ingest", "-q", examples},
		{"ingest", examples},
		{"score", "--ground-truth", examples + "/itbench-zero"},
		{"judge", "--model", "fake-model", "--base-url", srv.URL()},
		{"labels", "import", "--labeller", "ann", labelFile},
		{"labels", "export", "--source", "human:ann"},
		{"eval", "--labels", "human:ann", "--source", "detector", "--bootstrap", "50"},
		{"ls"},
		{"ls", "--json", "--model", "sim-beta", "--mode", "FM-1.3"},
		{"ls", "--search", "flagd*", "--outcome", "failure"},
		{"show", "019c22bd"},
		{"show", "--json", alpha},
		{"diff", alpha, beta},
		{"report"},
		{"report", "--format", "json", "--source", "judge"},
		{"export", "--format", "csv"},
		{"export", "--format", "jsonl", "--findings"},
		{"export", "--format", "otlp"},
		{"report", "-o", baseline},
		{"check", "--baseline", baseline},
		{"analyze", examples},
	} {
		sqOut, sqErr, sqCode := sq.run("", args...)
		pgOut, pgErr, pgCode := pg.run("", args...)
		if pgCode != exitOK {
			t.Errorf("faultline %s on PostgreSQL: exit %d: %s", strings.Join(args, " "), pgCode, pgErr)
		}
		sqOut, pgOut = scrub.ReplaceAllString(sqOut, "…"), scrub.ReplaceAllString(pgOut, "…")
		if sqCode != pgCode || sqOut != pgOut {
			t.Errorf("faultline %s: SQLite exits %d, PostgreSQL %d; %s\nSQLite's errors: %s\nPostgreSQL's: %s",
				strings.Join(args, " "), sqCode, pgCode, firstDifference(sqOut, pgOut), sqErr, pgErr)
		}
	}
}

// TestPostgresConnectionMessage names the server and what failed, once,
// and never the password.
func TestPostgresConnectionMessage(t *testing.T) {
	const secret = "hunter2-not-this"
	for _, args := range [][]string{{"ls"}, {"ingest", examples}, {"report"}} {
		c := &cli{t: t, db: fmt.Sprintf("postgres://faultline:%s@127.0.0.1:1/faultline", secret)}
		_, errOut, code := c.run("", args...)
		if code != exitFailure || strings.Contains(errOut, secret) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 ||
			!strings.Contains(errOut, `"faultline" on 127.0.0.1:1`) || !strings.Contains(errOut, "connection refused") {
			t.Errorf("faultline %s on an unreachable server: exit %d, %q", args[0], code, errOut)
		}
	}
}

// firstDifference shows the first line at which two outputs differ.
func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d differs:\n  SQLite:     %q\n  PostgreSQL: %q", i+1, x, y)
		}
	}
	return "the outputs are the same"
}

// TestRealTracesOnPostgres ingests the real ITBench rollouts and the real
// samples of the other formats into both backends and expects the same
// listing, report and searches: real text (emoji with variation
// selectors, long outputs) is what a backend's own encoding trips on.
func TestRealTracesOnPostgres(t *testing.T) {
	rollouts := shared.Path(t, "itbench/ITBench-SRE-Agent@29c782a/agent_outputs/2/1")
	samples := shared.Path(t, "samples")
	pg := &cli{t: t, db: pgtest.Database(t)}
	sq := newCLI(t)
	for _, args := range [][]string{
		{"ingest", "-q", rollouts, samples},
		{"ls"},
		{"report", "--format", "json"},
		{"ls", "--search", "kubectl get pods"},
		{"ls", "--search", "\"crash loop\" OR oomkilled"},
	} {
		sqOut, sqErr, sqCode := sq.run("", args...)
		pgOut, pgErr, pgCode := pg.run("", args...)
		if sqCode != pgCode || sqOut != pgOut {
			t.Errorf("faultline %s: SQLite exits %d, PostgreSQL %d; %s\nSQLite's errors: %s\nPostgreSQL's: %s",
				strings.Join(args, " "), sqCode, pgCode, firstDifference(sqOut, pgOut), sqErr, pgErr)
		}
	}
}
