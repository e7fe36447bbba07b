package discover

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/faultline/faultline/internal/text"
)

// normaliseCases are lines from the real Codex rollouts of ITBench's Zero
// agent (paths shortened where they ran long) and error texts of the
// kinds its tools print.
var normaliseCases = []struct{ in, want string }{
	{"ls: /Users/noahz/Documents/ITBench-SRE-Agent/ITBench-Lite/snapshots/sre/v0.2-B96DF826-4BB2-4B62-97AB-6D84254C53D7/Scenario-2/otel_demo_application_architecture.json: No such file or directory",
		"ls: <path>/otel_demo_application_architecture.json: No such file or directory"},
	{"head: /Users/noahz/Documents/ITBench-SRE-Agent/ITBench-Lite/snapshots/sre/v0.2-B96DF826/alerts/alerts_at_2025-12-15T17-30-49.329092.json: No such file or directory",
		"head: <path>/alerts_at_<time>.json: No such file or directory"},
	{"sandbox-exec: execvp() of 'cat <<EOF > /Users/noahz/Documents/ITBench-SRE-Agent/agent_outputs/2/1/agent_generated_code/analyze_logs.py",
		"sandbox-exec: execvp() of '<text>"},
	{"sandbox-exec: execvp() of 'python3 --version' failed: No such file or directory",
		"sandbox-exec: execvp() of 'python3 --version' failed: No such file or directory"},
	{"failed to parse function arguments: EOF while parsing a string at line 2 column 1502",
		"failed to parse function arguments: EOF while parsing a string at line <num> column <num>"},
	{"jq: parse error: Invalid literal at line 8, column 123", "jq: parse error: Invalid literal at line <num>, column <num>"},
	{"ModuleNotFoundError: No module named 'pandas'", "ModuleNotFoundError: No module named 'pandas'"},
	{`Error from server (NotFound): pods "checkout-7d9f8c6b5-x2k4q" not found`, `Error from server (NotFound): pods "checkout-<pod>" not found`},
	{"replicaset.apps/checkout-7d9f8c6b5 scaled; dial tcp 10.0.185.154:443: i/o timeout",
		"replicaset.apps/checkout-<rs> scaled; dial tcp <ip>: i/o timeout"},
	{"I don't see agent_output.json yet, request_id=req_9f8a7b6c5d4e3f21 trace 4bf92f3577b34da6a3ce929d0e0e4736 at 12:30:01.123",
		"I don't see agent_output.json yet, request_id=req_<hex> trace <hex> at <time>"},
	{"Get https://api.example.com/v1/things?id=42: context deadline exceeded after 30s", "Get <url>: context deadline exceeded after <num>s"},
	{"session 019bc2fe-8321-7480-a139-73bcbd8087f4 is empty", "session <uuid> is empty"},
	{`error: container "sha256:0a1b2c3d4e5f" exited on 2025-12-15`, `error: container "<id>" exited on <date>`},
	{"utf8 decode error in x2k4q at byte 40213", "utf8 decode error in x2k4q at byte <num>"},
	{"   cat:   /tmp/run-17/out.json:\tPermission denied  ", "cat: <path>/out.json: Permission denied"},
	{"cannot open /etc", "cannot open /etc"},
	{"cd ../ && ls ~/runs/17/out.json ./x.py /", "cd ../ && ls <path>/out.json <path>/x.py /"},
}

func TestNormalise(t *testing.T) {
	for _, c := range normaliseCases {
		got := Normalise(c.in)
		if got != c.want {
			t.Errorf("Normalise(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
		if again := Normalise(c.in); again != got {
			t.Errorf("Normalise(%q) is not deterministic: %q then %q", c.in, got, again)
		}
	}
}

// TestTemplateRegexp checks that the regular expression made from each
// template matches the line it was made from, and only from its start.
func TestTemplateRegexp(t *testing.T) {
	for _, c := range normaliseCases {
		re, err := regexp.Compile("^" + TemplateRegexp(Normalise(c.in)))
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if !re.MatchString(strings.TrimSpace(c.in)) {
			t.Errorf("%s does not match %q", re, c.in)
		}
	}
	if re := regexp.MustCompile(TemplateRegexp("ls: <path>/agent_output.json: No such file")); re.MatchString("ls: /a/b/alerts.json: No such file") {
		t.Errorf("%s matches another file", re)
	}
}

func TestFirstLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"\n\n  ---\n  Traceback (most recent call last):\n  File x", "Traceback (most recent call last):"},
		{"", ""},
		{"{\n}\n", ""},
		{"héllo wörld, a long line", "héllo wörld"},
	} {
		if got := FirstLine(c.in, 11); got != text.Head(c.want, 11) {
			t.Errorf("FirstLine(%q) = %q, want %q", c.in, got, text.Head(c.want, 11))
		}
	}
}

func TestTokens(t *testing.T) {
	got := Tokens("sandbox-exec: execvp() of '<text> failed: No such FILE, no such file")
	want := []string{"sandbox", "exec", "execvp", "of", "<text>", "failed", "no", "such", "file"}
	if !slices.Equal(got, want) {
		t.Errorf("Tokens = %q, want %q", got, want)
	}
}

// FuzzNormalise holds Normalise to being deterministic and idempotent on
// its own masks, and the regular expression of a template to matching the
// line it was made from.
func FuzzNormalise(f *testing.F) {
	for _, c := range normaliseCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n\r") || !utf8.ValidString(line) {
			return // Normalise is given one line of text
		}
		template := Normalise(line)
		if again := Normalise(line); again != template {
			t.Fatalf("not deterministic: %q then %q", template, again)
		}
		re, err := regexp.Compile(TemplateRegexp(template))
		if err != nil {
			t.Fatalf("%q: %v", template, err)
		}
		if !re.MatchString(strings.TrimSpace(line)) {
			t.Fatalf("%s (from %q) does not match %q", re, template, line)
		}
	})
}
