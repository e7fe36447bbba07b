package main

import (
	"slices"
	"strings"
	"testing"
)

func TestCloseValues(t *testing.T) {
	stored := []string{"gpt-oss-120b", "openai/gpt-oss-120b", "watsonx/openai/gpt-oss-120b", "gemini-3-flash-preview", "gpt-5.1-codex-max"}
	for _, tc := range []struct {
		want string
		near []string
	}{
		{"gpt-oss", []string{"gpt-oss-120b", "openai/gpt-oss-120b", "watsonx/openai/gpt-oss-120b"}},
		{"GPT-OSS-120B", []string{"gpt-oss-120b", "openai/gpt-oss-120b", "watsonx/openai/gpt-oss-120b"}},
		{"gemini-3-flash-previw", []string{"gemini-3-flash-preview"}},
		{"claude", nil},
	} {
		if got := closeValues(tc.want, stored, 5); !slices.Equal(got, tc.near) && !(len(got) == 0 && len(tc.near) == 0) {
			t.Errorf("closeValues(%q) = %v, want %v", tc.want, got, tc.near)
		}
	}
}

// An empty listing says why: an empty database, a value no trace has (with
// the close ones), or filters that match nothing together.
func TestLsNoMatch(t *testing.T) {
	c := newCLI(t)
	c.run("", "ingest", "-q", "--no-detect", "../../ingest/testdata/samples/atif")
	if _, errOut, _ := c.run("", "ls", "--model", "nothing-like-it"); !strings.Contains(errOut, `no trace has --model "nothing-like-it"; the`) {
		t.Errorf("unknown model: %q", errOut)
	}
	empty := newCLI(t)
	empty.run("", "ingest", "-q", t.TempDir())
	if _, errOut, _ := empty.run("", "ls"); !strings.Contains(errOut, "the database holds no traces") {
		t.Errorf("empty database: %q", errOut)
	}
	c.run("", "ingest", "-q", examples)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ls", "--model", "sim"}, `no trace has --model "sim"; stored values close to it: sim-alpha, sim-beta, sim-gamma`},
		{[]string{"ls", "--model", "sim-alpha", "--trace-format", "atif"}, "no trace matches these filters together"},
		{[]string{"ls", "--search", "zzzunlikely"}, `no trace matches --search "zzzunlikely"`},
		{[]string{"ls", "--model", "openai/sim-alpha", "--outcome", "failure"}, "no trace matches these filters together"},
	} {
		if _, errOut, code := c.run("", tc.args...); code != exitOK || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
}
