package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/store/sqlite"
	"github.com/faultline/faultline/trace"
)

// filterTraces is a small cohort in which each filter keeps a different
// set: one model written three ways, two systems and formats, findings of
// the detectors and a judge, outcomes of each kind, and step text to
// search.
func filterTraces() []*trace.Trace {
	yes, no := true, false
	mk := func(id, model, system, format, scenario, detected string, success *bool, text string, fs ...trace.Finding) *trace.Trace {
		t := &trace.Trace{ID: id, Model: model, System: system, Format: format, Scenario: scenario, DetectedWith: detected, Findings: fs}
		if success != nil {
			t.Outcomes = []trace.Outcome{{Source: "labels", Success: success}}
		}
		t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleUser, Text: "Find the root cause."})
		t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant, Text: text})
		return t
	}
	f := func(src, mode string, v trace.Verdict) trace.Finding {
		return trace.Finding{Source: src, Mode: mode, Verdict: v, Steps: []int{1}}
	}
	return []*trace.Trace{
		mk("t1", "gpt-oss-120b", "itbench-zero", "codex", "1", "r1", &yes, "the checkout pod is OOMKilled", f("detector", "FM-1.3", trace.Present)),
		mk("t2", "openai/gpt-oss-120b", "itbench-zero", "codex", "2", "r1", &no, "restarting the cart service",
			f("detector", "FM-1.3", trace.Present), f("judge:x", "FM-3.2", trace.Present), f("judge:x", "FM-1.3", trace.Absent)),
		mk("t3", "watsonx/openai/gpt-oss-120b", "itbench-zero", "codex", "1", "r1", nil, "nothing found", f("judge:x", "FM-1.3", trace.Present)),
		mk("t4", "gemini-2.5-flash", "ChatDev", "mad", "", "", &no, "OOMKilled again", f("human:ann", "FM-3.2", trace.Present)),
	}
}

// filterCLI is a CLI whose database holds filterTraces.
func filterCLI(t *testing.T) *cli {
	t.Helper()
	c := newCLI(t)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, c.db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := ingest.StoreFile(ctx, st, ingest.FileInfo{Path: "/runs/a.jsonl", Hash: "h"}, filterTraces()...); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFiltersOnLsReportExport(t *testing.T) {
	c := filterCLI(t)
	tests := []struct {
		name string
		args []string
		want string // the trace ids kept, sorted
	}{
		{"none", nil, "t1 t2 t3 t4"},
		{"canonical model", []string{"--model", "gpt-oss-120b"}, "t1 t2 t3"},
		{"model as a provider writes it", []string{"--model", "watsonx/gpt-oss-120b"}, "t1 t2 t3"},
		{"two models", []string{"--model", "gemini-2.5-flash,gpt-oss-120b"}, "t1 t2 t3 t4"},
		{"system", []string{"--system", "ChatDev"}, "t4"},
		{"scenario", []string{"--scenario", "1"}, "t1 t3"},
		{"trace format", []string{"--trace-format", "mad"}, "t4"},
		{"outcome", []string{"--outcome", "failure"}, "t2 t4"},
		{"unknown outcome", []string{"--outcome", "unknown"}, "t3"},
		{"mode", []string{"--mode", "FM-1.3"}, "t1 t2 t3"},
		{"mode by a short code", []string{"--mode", "3.2"}, "t2 t4"},
		{"two modes: all of them", []string{"--mode", "FM-1.3", "--mode", "FM-3.2"}, "t2"},
		{"mode by a source", []string{"--mode", "FM-1.3", "--source", "judge"}, "t3"},
		{"source", []string{"--source", "judge:x"}, "t2 t3"},
		{"detectors: the traces they ran on", []string{"--source", "detector"}, "t1 t2 t3"},
		{"source prefix", []string{"--source", "human"}, "t4"},
		{"search", []string{"--search", "oomkilled"}, "t1 t4"},
		{"search and model", []string{"--search", "oomkilled", "--model", "gpt-oss-120b"}, "t1"},
		{"path", []string{"--path", "/runs"}, "t1 t2 t3 t4"},
		{"another path", []string{"--path", "/elsewhere"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lsIDs(t, c, tt.args...); got != tt.want {
				t.Errorf("ls: %q, want %q", got, tt.want)
			}
			if tt.want == "" {
				if _, errOut, code := c.run("", append([]string{"report"}, tt.args...)...); code != exitFailure || !strings.Contains(errOut, "no trace matches") {
					t.Errorf("report on no trace: exit %d, %s", code, errOut)
				}
			} else if got := reportTraces(t, c, tt.args...); got != strings.Count(tt.want, "t") {
				t.Errorf("report: %d traces, want those of %q", got, tt.want)
			}
			if got := exportIDs(t, c, tt.args...); got != tt.want {
				t.Errorf("export: %q, want %q", got, tt.want)
			}
		})
	}
}

func lsIDs(t *testing.T, c *cli, args ...string) string {
	t.Helper()
	out, errOut, code := c.run("", append([]string{"ls", "--json"}, args...)...)
	if code != exitOK {
		t.Fatalf("ls %v: exit %d: %s", args, code, errOut)
	}
	var list []store.Summary
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	slices.Sort(ids)
	return strings.Join(ids, " ")
}

func reportTraces(t *testing.T, c *cli, args ...string) int {
	t.Helper()
	out, errOut, code := c.run("", append([]string{"report", "--format", "json"}, args...)...)
	if code != exitOK {
		t.Fatalf("report %v: exit %d: %s", args, code, errOut)
	}
	var r struct{ Traces int }
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	return r.Traces
}

func exportIDs(t *testing.T, c *cli, args ...string) string {
	t.Helper()
	out, errOut, code := c.run("", append([]string{"export", "--format", "jsonl", "-q"}, args...)...)
	if code != exitOK {
		t.Fatalf("export %v: exit %d: %s", args, code, errOut)
	}
	seen := map[string]bool{}
	var ids []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var row struct {
			TraceID string `json:"trace_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if !seen[row.TraceID] {
			seen[row.TraceID] = true
			ids = append(ids, row.TraceID)
		}
	}
	slices.Sort(ids)
	return strings.Join(ids, " ")
}

// TestExportSourceKeepsItsFindings: --source on export selects traces and
// writes the findings of that source alone.
func TestExportSourceKeepsItsFindings(t *testing.T) {
	c := filterCLI(t)
	out, errOut, code := c.run("", "export", "--format", "jsonl", "--findings", "-q", "--source", "judge")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if n := strings.Count(out, "\n"); n != 3 || strings.Contains(out, `"source":"detector"`) {
		t.Errorf("%d rows:\n%s", n, out)
	}
}

// TestReportMergesModelNames: a report by model groups the names of one
// model and says which it merged; the alias table of faultline.yaml names
// others.
func TestReportMergesModelNames(t *testing.T) {
	c := filterCLI(t)
	out, errOut, code := c.run("", "report")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "gpt-oss-120b is also written as openai/gpt-oss-120b, watsonx/openai/gpt-oss-120b.") {
		t.Errorf("no note of the merged names:\n%s", out)
	}
	config := filepath.Join(t.TempDir(), "settings.yaml")
	if err := os.WriteFile(config, []byte("models:\n  gemini-2.5-flash: gpt-oss-120b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, _ = c.run("", "--config", config, "report", "--format", "json")
	var r struct {
		Groups []struct {
			Name          string
			Traces        int
			AlsoWrittenAs []string `json:"also_written_as"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Groups) != 1 || r.Groups[0].Traces != 4 || len(r.Groups[0].AlsoWrittenAs) != 3 {
		t.Errorf("groups %+v", r.Groups)
	}
	if got := lsIDs(t, c, "--config", config, "--model", "gpt-oss-120b"); got != "t1 t2 t3 t4" {
		t.Errorf("ls --model with the alias table: %q", got)
	}
	// A bad file is named, with its line.
	if err := os.WriteFile(config, []byte("models:\n  a: [b]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := c.run("", "--config", config, "ls"); code != exitFailure || !strings.Contains(errOut, config+":2: ") {
		t.Errorf("bad settings: exit %d, %s", code, errOut)
	}
}

// TestDeprecatedFlagNames: the old names of renamed flags still work, and
// say once what replaced them.
func TestDeprecatedFlagNames(t *testing.T) {
	c := filterCLI(t)
	tests := []struct {
		old, current []string
		notice       string
	}{
		{[]string{"ls", "--format", "mad"}, []string{"ls", "--trace-format", "mad"}, "--format on ls is deprecated: use --trace-format\n"},
		{[]string{"score", "--ground-truth", examples + "/itbench-zero/ground_truths.json", "--dry-run", "--json", "--scenario", "1"},
			[]string{"score", "--ground-truth", examples + "/itbench-zero/ground_truths.json", "--dry-run", "--json", "--incident", "1"},
			"--scenario on score is deprecated: use --incident\n"},
	}
	for _, tt := range tests {
		out, errOut, code := c.run("", tt.old...)
		want, wantErr, wantCode := c.run("", tt.current...)
		if out != want || code != wantCode {
			t.Errorf("%v: exit %d\n%s\nwant (as %v) exit %d\n%s", tt.old, code, out, tt.current, wantCode, want)
		}
		if errOut != tt.notice+wantErr {
			t.Errorf("%v: stderr %q, want %q", tt.old, errOut, tt.notice+wantErr)
		}
		if _, errOut, _ := c.run("", append([]string{"-q"}, tt.old...)...); strings.Contains(errOut, "deprecated") {
			t.Errorf("%v -q: %q", tt.old, errOut)
		}
	}
	// Hidden from the help.
	if out, _, _ := c.run("", "ls", "--help"); strings.Contains(out, "--format") || !strings.Contains(out, "--trace-format") {
		t.Errorf("ls --help:\n%s", out)
	}
}

func TestParseWhere(t *testing.T) {
	tests := []struct {
		where   []string
		want    string // the filter, as %v prints it; "" for an error
		err     string
		notices string
	}{
		{[]string{"model=gpt-oss-120b, outcome=failure,path=runs/a", "path=runs/b,limit=5,scenario=2"},
			"model [gpt-oss-120b] scenario [2] outcome failure paths [runs/a runs/b] limit 5", "", ""},
		{[]string{"model=a,model=b,mode=1.3,source=judge,search=oom killed"}, "model [a b] modes [FM-1.3] sources [judge] search oom killed", "", ""},
		{[]string{"format=mad"}, "format [mad]", "", "--where format= on judge is deprecated: use trace-format=\n"},
		{[]string{"trace-format=mad"}, "format [mad]", "", ""},
		{[]string{"outcome=failure,outcome=success"}, "", "--where: outcome given twice", ""},
		{[]string{"outcome=maybe"}, "", "--where: outcome must be one of success, failure, unknown", ""},
		{[]string{"mode=FM-9.9"}, "", `--where: mode "FM-9.9" is no MAST mode`, ""},
		{[]string{"limit=0"}, "", "--where: limit must be a positive number", ""},
		{[]string{"colour=red"}, "", `--where: unknown key "colour"`, ""},
		{[]string{"model"}, "", `--where: "model" is not key=value`, ""},
	}
	for _, tt := range tests {
		var notices strings.Builder
		f, err := parseWhere(tt.where, &notices)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v: err %v, want %q", tt.where, err, tt.err)
			}
		case err != nil:
			t.Errorf("%v: %v", tt.where, err)
		case describeFilter(f) != tt.want:
			t.Errorf("%v: %s, want %s", tt.where, describeFilter(f), tt.want)
		}
		if notices.String() != tt.notices {
			t.Errorf("%v: notices %q, want %q", tt.where, notices.String(), tt.notices)
		}
	}
}

// describeFilter prints the fields of a filter that are set.
func describeFilter(f store.Filter) string {
	var parts []string
	add := func(name string, set bool, v any) {
		if set {
			parts = append(parts, name+" "+strings.Trim(strings.TrimSpace(jsonText(v)), `"`))
		}
	}
	add("model", f.Model != nil, f.Model)
	add("system", f.System != nil, f.System)
	add("scenario", f.Scenario != nil, f.Scenario)
	add("format", f.Format != nil, f.Format)
	add("outcome", f.Outcome != "", f.Outcome)
	add("modes", f.Modes != nil, f.Modes)
	add("sources", f.Sources != nil, f.Sources)
	add("search", f.Search != "", f.Search)
	add("paths", f.Paths != nil, f.Paths)
	add("limit", f.Limit != 0, f.Limit)
	return strings.Join(parts, " ")
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return strings.NewReplacer(`","`, " ", `["`, "[", `"]`, "]").Replace(string(b))
}

// TestEvalFilters: eval compares on the labelled traces the filters keep.
func TestEvalFilters(t *testing.T) {
	c := filterCLI(t)
	for _, tt := range []struct {
		args   []string
		traces int
	}{
		{nil, 2},
		{[]string{"--outcome", "failure"}, 1},
		{[]string{"--model", "watsonx/gpt-oss-120b", "--search", "nothing"}, 1},
	} {
		out, errOut, code := c.run("", append([]string{"eval", "--labels", "judge:x", "--json", "--bootstrap", "0"}, tt.args...)...)
		var res struct {
			Agreement struct {
				Labels struct{ Traces int }
			}
		}
		if code != exitFailure && json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("%v: exit %d: %s", tt.args, code, errOut)
		}
		if res.Agreement.Labels.Traces != tt.traces {
			t.Errorf("%v: labels on %d traces, want %d (%s)", tt.args, res.Agreement.Labels.Traces, tt.traces, errOut)
		}
	}
	if _, errOut, code := c.run("", "eval", "--labels", "judge:x", "--trace-format", "inspect"); code != exitFailure || !strings.Contains(errOut, "the filters keep none of the 4 traces") {
		t.Errorf("nothing kept: exit %d, %s", code, errOut)
	}
}
