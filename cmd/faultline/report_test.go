package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/analyze"
)

func TestReportFormats(t *testing.T) {
	c := newCLI(t)
	analyzed, _, code := c.run("", "analyze", "-q", examples)
	if code != exitOK {
		t.Fatalf("analyze: exit %d", code)
	}
	// analyze prints the report of what it analysed: here, the whole database.
	text, errOut, code := c.run("", "report")
	if code != exitOK || text != analyzed {
		t.Errorf("report: exit %d %s\nreport and analyze differ:\n%s", code, errOut, text)
	}
	md, _, code := c.run("", "report", "--format", "md")
	if code != exitOK || !strings.HasPrefix(md, "# faultline cohort report: 12 traces by model\n") || !strings.Contains(md, "| model | traces |") {
		t.Errorf("md: exit %d\n%s", code, md)
	}
	golden(t, "report_examples.md", md)

	dir := t.TempDir()
	for file, want := range map[string]string{"r.html": "<!DOCTYPE html>", "r.json": `"schema": "` + analyze.ReportSchema + `"`, "r.md": "# faultline", "r.txt": "faultline cohort report"} {
		path := filepath.Join(dir, file)
		if out, errOut, code := c.run("", "report", "-o", path); code != exitOK || out != "" {
			t.Errorf("-o %s: exit %d %s %s", file, code, out, errOut)
		}
		if b, _ := os.ReadFile(path); !strings.HasPrefix(string(b), want) && !strings.Contains(string(b)[:200], want) {
			t.Errorf("%s starts %.80q, want %q", file, b, want)
		}
	}
	// --format wins over the extension.
	c.run("", "report", "--format", "json", "-o", filepath.Join(dir, "x.html"))
	if b, _ := os.ReadFile(filepath.Join(dir, "x.html")); !json.Valid(b) {
		t.Error("--format json -o x.html did not write JSON")
	}

	cmp, _, code := c.run("", "report", "--compare", "sim-beta", "sim-gamma")
	if code != exitOK || !strings.Contains(cmp, "2. sim-beta against sim-gamma") || !strings.Contains(cmp, "faultline cohort report: 8 traces by model") {
		t.Errorf("compare: exit %d\n%s", code, cmp)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--compare", "sim-beta"}, "--compare takes two groups, got 1"},
		{[]string{"report", "sim-beta"}, "to compare two groups: --compare A B"},
		{[]string{"report", "--compare", "sim-beta", "nope"}, `cannot compare: no model named "nope" among these traces; there are: sim-alpha, sim-beta, sim-gamma`},
		{[]string{"report", "--format", "pdf"}, "--format must be one of text, md, html, json"},
		{[]string{"report", "--by", "colour"}, `cannot group by "colour"`},
	} {
		if _, errOut, code := c.run("", tt.args...); code != exitFailure || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, code, errOut, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	c := newCLI(t)
	if _, _, code := c.run("", "analyze", "-q", examples); code != exitOK {
		t.Fatal("analyze failed")
	}
	baseline := filepath.Join(t.TempDir(), "baseline.json")
	c.run("", "report", "-o", baseline)
	out, errOut, code := c.run("", "check", "--baseline", baseline)
	if code != exitOK || !strings.HasPrefix(out, "12 traces by model against "+baseline+" (12 traces)\n") || !strings.Contains(out, "ok: 59 figures within their limits") {
		t.Errorf("same cohort: exit %d %s\n%s", code, errOut, out)
	}
	// analyze --json's form serves as a baseline too.
	wrapped := filepath.Join(t.TempDir(), "analysis.json")
	doc, _, _ := c.run("", "analyze", "--json")
	os.WriteFile(wrapped, []byte(doc), 0o644)
	if _, errOut, code := c.run("", "check", "--baseline", wrapped); code != exitOK {
		t.Errorf("analyze --json baseline: exit %d %s", code, errOut)
	}

	// sim-beta's runs alone: step repetition in 3 of 4 traces against 4 of
	// 12 in the whole baseline.
	out, errOut, code = c.run("", "check", "--baseline", baseline, "--max-increase", "10%", filepath.Join(examples, "itbench-zero", "sim-beta"))
	if code != exitDataError || !strings.Contains(out, "FAIL: 1 of 30 figures rose past their limit") ||
		!strings.Contains(out, "all    FM-1.3 Step repetition  4/12 33%  3/4 75%  +41.7 pts  +10.0 pts  REGRESSION") ||
		!strings.Contains(out, "not checked, in the baseline only: sim-alpha, sim-gamma") {
		t.Errorf("sim-beta alone: exit %d %s\n%s", code, errOut, out)
	}
	if _, _, code := c.run("", "check", "--baseline", baseline, "--max-increase", "0.5", filepath.Join(examples, "itbench-zero", "sim-beta")); code != exitOK {
		t.Errorf("looser limit: exit %d", code)
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"schema": "faultline-report/9", "all": {}}`), 0o644)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"check"}, `required flag(s) "baseline" not set`},
		{[]string{"check", "--baseline", bad}, `report schema "faultline-report/9"`},
		{[]string{"check", "--baseline", "nope.json"}, "baseline: open nope.json"},
		{[]string{"check", "--baseline", baseline, "--max-increase", "5"}, `--max-increase: "5" is not between 0 and 1`},
		{[]string{"check", "--baseline", baseline, "--max-increase", "lots"}, `"lots" is not a share`},
	} {
		if _, errOut, code := c.run("", tt.args...); code != exitFailure || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tt.args, code, errOut, tt.want)
		}
	}
}
