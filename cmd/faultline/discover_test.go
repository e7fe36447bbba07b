package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/discover"
	"github.com/faultline/faultline/internal/judge/judgetest"
	"github.com/faultline/faultline/rules"
)

// discoverCLI is a database holding a small synthetic corpus, analysed.
func discoverCLI(t *testing.T) *cli {
	t.Helper()
	c := newCLI(t)
	dir := filepath.Join(t.TempDir(), "corpus")
	if _, errOut, code := c.run("", "synth", "--seed", "3", "--traces", "90", "--out", dir); code != exitOK {
		t.Fatalf("synth: exit %d %s", code, errOut)
	}
	if _, errOut, code := c.run("", "analyze", "-q", dir); code != exitOK {
		t.Fatalf("analyze: exit %d %s", code, errOut)
	}
	return c
}

func TestDiscover(t *testing.T) {
	c := discoverCLI(t)
	out, errOut, code := c.run("", "discover", "--json")
	if code != exitOK {
		t.Fatalf("discover --json: exit %d %s", code, errOut)
	}
	if !strings.Contains(errOut, "discover: read the steps of 90 of 90 traces") {
		t.Errorf("no progress on stderr: %q", errOut)
	}
	var res discover.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Traces != 90 || res.Failed+res.Succeeded+res.Undecided != 90 || len(res.Patterns) == 0 || res.Tested != len(res.Patterns) {
		t.Fatalf("traces %d = %d failed + %d succeeded + %d undecided, %d patterns (%d tested)",
			res.Traces, res.Failed, res.Succeeded, res.Undecided, len(res.Patterns), res.Tested)
	}
	kinds := map[discover.Kind]bool{}
	for i, p := range res.Patterns {
		kinds[p.Kind] = true
		if p.Failed.K < 2 || p.Failed.N != res.Failed || p.Succeeded.N != res.Succeeded || len(p.Traces) != p.Failed.K+p.Succeeded.K {
			t.Errorf("pattern %s: failed %v, succeeded %v, %d traces", p.ID, p.Failed, p.Succeeded, len(p.Traces))
		}
		if i > 0 && p.Failed.K > res.Patterns[i-1].Failed.K {
			t.Errorf("pattern %d covers more failed runs than the one before it", i+1)
		}
		if len(p.Quotes) == 0 || p.Quotes[0].Text == "" || p.ID != discover.PatternID(p.Signature()) {
			t.Errorf("pattern %s: quotes %v", p.ID, p.Quotes)
		}
	}
	if len(kinds) != 3 {
		t.Errorf("kinds of pattern: %v", kinds)
	}

	text, _, code := c.run("", "discover", "-q", "--limit", "2", "--kind", "errors,endings")
	lines := strings.Split(text, "\n")
	if code != exitOK || !strings.HasPrefix(text, "faultline discover: recurring failure patterns\n") ||
		!strings.Contains(text, "#  id          kind") || !strings.Contains(text, "The first 2 are shown.") ||
		strings.Contains(text, "findings") || !strings.Contains(text, "\nClass: the cohort report's rule") {
		t.Errorf("text: exit %d\n%s", code, text)
	}
	if len(lines) < 10 {
		t.Errorf("text is short:\n%s", text)
	}

	md, _, code := c.run("", "discover", "-q", "--markdown", "--min-failed", "3", "--model", "sim-delta")
	if code != exitOK || !strings.Contains(md, "| # | id | kind | pattern | failed | succeeded | lift | q | class | by model | quote |") ||
		strings.Contains(md, "sim-zeta") {
		t.Errorf("markdown: exit %d\n%s", code, md)
	}

	for _, args := range [][]string{{"--kind", "steps"}, {"--min-failed", "0"}, {"--json", "--markdown"}, {"--model", "nobody"}} {
		if _, errOut, code := c.run("", append([]string{"discover"}, args...)...); code != exitFailure || errOut == "" {
			t.Errorf("discover %v: exit %d %q", args, code, errOut)
		}
	}
}

// --save-rule appends a pattern as a rule that loads, and refuses a
// pattern no step's text shows; --name names the patterns shown, and says
// which it could not.
func TestDiscoverSaveRuleAndName(t *testing.T) {
	c := discoverCLI(t)
	out, _, code := c.run("", "discover", "-q", "--json")
	var res discover.Result
	if err := json.Unmarshal([]byte(out), &res); code != exitOK || err != nil {
		t.Fatalf("exit %d, %v", code, err)
	}
	var errorID, endingID string
	for _, p := range res.Patterns {
		switch {
		case p.Kind == discover.KindError && errorID == "":
			errorID = p.ID
		case p.Kind == discover.KindEnding && endingID == "":
			endingID = p.ID
		}
	}
	if errorID == "" || endingID == "" {
		t.Fatalf("no error or ending pattern among %d", len(res.Patterns))
	}
	path := filepath.Join(t.TempDir(), "rules.yaml")
	out, errOut, code := c.run("", "discover", "-q", "--save-rule", errorID[:6], "--rule-mode", "FM-2.3", "--rules", path)
	if code != exitOK || !strings.HasPrefix(out, "Added rule pattern-"+errorID+" (line ") || !strings.Contains(out, "kind: tool_result") {
		t.Fatalf("--save-rule: exit %d %s %s", code, out, errOut)
	}
	set, err := rules.Load(path)
	if err != nil || len(set.Rules) != 1 || set.Rules[0].Mode != "FM-2.3" {
		t.Fatalf("the rules file: %v", err)
	}
	// The same again: the name is taken.
	if _, errOut, code := c.run("", "discover", "-q", "--save-rule", errorID, "--rule-mode", "FM-2.3", "--rules", path); code != exitFailure || errOut == "" {
		t.Errorf("saved twice: exit %d", code)
	}
	for _, args := range [][]string{{"--save-rule", endingID}, {"--save-rule", errorID}, {"--save-rule", "zzzz"}} {
		if _, errOut, code := c.run("", append([]string{"discover", "-q", "--rules", path}, args...)...); code != exitFailure || errOut == "" {
			t.Errorf("%v: exit %d %q", args, code, errOut)
		}
	}

	srv := judgetest.NewServer(func(call judgetest.Call) judgetest.Reply {
		if call.N == 1 {
			return judgetest.Reply{Content: `{"name": "Answer file unreadable", "description": "The check of the answer file fails.", "code": "FM-3.1"}`}
		}
		return judgetest.Reply{Content: "no idea"}
	})
	defer srv.Close()
	out, errOut, code = c.run("", "discover", "--name", "--name-model", "m", "--base-url", srv.URL(), "--limit", "2", "--retries", "0")
	if code != exitDataError || !strings.Contains(out, "named: Answer file unreadable (FM-3.1): The check of the answer file fails.") ||
		!strings.Contains(out, "naming failed: two answers did not validate") || !strings.Contains(errOut, "1 of 2 patterns could not be named") {
		t.Errorf("--name: exit %d\n%s\n%s", code, out, errOut)
	}
	if calls := srv.Calls(); len(calls) != 3 || calls[0].Model != "m" || calls[0].FormatType() != "json_object" {
		t.Errorf("%d calls", len(calls))
	}
	if _, errOut, code := c.run("", "discover", "--name"); code != exitFailure || !strings.Contains(errOut, "no model") {
		t.Errorf("--name without a model: exit %d %s", code, errOut)
	}
}
