package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// TestTerminalEscapes: a trace whose id, model, task and messages carry
// escape sequences (a window title, a clear screen, an 8-bit CSI) cannot
// drive the terminal through ls, show or an error that names it; --json
// prints the content exactly.
func TestTerminalEscapes(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	for _, run := range []string{"1", "2"} {
		chat := `{"id":"run\u001b]0;pwned\u0007-` + run + `","model":"gpt\u001b[2J\u001b[H-x","messages":[` +
			`{"role":"user","content":"**Task**: clear \u001b[2J\u001b[3J the screen now please\nline2\tTabbed"},` +
			`{"role":"assistant","content":"hello\u001b]0;TITLE\u0007 world\r\nsecond\u009b31m line\u007f"}]}`
		if err := os.WriteFile(filepath.Join(dir, "evil"+run+".json"), []byte(chat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, errOut, code := c.run("", "ingest", "-q", dir); code != exitOK {
		t.Fatalf("ingest: exit %d %s", code, errOut)
	}
	id := "chat:run\x1b]0;pwned\x07-1"
	tests := []struct {
		name string
		args []string
		code int
		want []string // in stdout and stderr
	}{
		{"ls", []string{"ls"}, exitOK, []string{"chat:run\ufffd]0;pwned\ufffd-1  gpt\ufffd[2J\ufffd[H-x", "Task: clear \ufffd[2J\ufffd[3J the screen"}},
		{"show", []string{"show", id}, exitOK, []string{
			"trace     chat:run\ufffd]0;pwned\ufffd-1\n",
			"      **Task**: clear \ufffd[2J\ufffd[3J the screen now please\n      line2\tTabbed\n",
			"      hello\ufffd]0;TITLE\ufffd world\n      second\ufffd31m line\ufffd\n",
		}},
		{"an error naming the traces", []string{"show", "chat:run"}, exitFailure, []string{"is ambiguous: matches chat:run\ufffd]0;pwned\ufffd-1, chat:run\ufffd]0;pwned\ufffd-2"}},
	}
	for _, tt := range tests {
		out, errOut, code := c.run("", tt.args...)
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d: %s", tt.name, code, tt.code, errOut)
		}
		for _, s := range []string{out, errOut} {
			if i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }); i >= 0 {
				t.Errorf("%s: a control character reached the terminal at byte %d:\n%q", tt.name, i, s)
			}
		}
		for _, want := range tt.want {
			if !strings.Contains(out+errOut, want) {
				t.Errorf("%s: lacks %q:\n%s%s", tt.name, want, out, errOut)
			}
		}
	}

	// JSON is exact: it escapes what it must itself.
	out, _, _ := c.run("", "ls", "--json")
	var list []struct{ ID, Model string }
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 2 || list[0].ID != id || list[0].Model != "gpt\x1b[2J\x1b[H-x" {
		t.Errorf("ls --json: %v %q", err, list)
	}
	out, _, _ = c.run("", "show", "--json", id)
	var shown struct {
		Steps []struct{ Text string }
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil || len(shown.Steps) != 2 || shown.Steps[1].Text != "hello\x1b]0;TITLE\x07 world\r\nsecond\u009b31m line\x7f" {
		t.Errorf("show --json: %v %q", err, shown.Steps)
	}
}
