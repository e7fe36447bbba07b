package report

import (
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	tests := []struct {
		name  string
		table Table
		want  string
	}{
		{"left", Table{Header: []string{"ID", "NAME"}, Rows: [][]string{{"1", "alpha"}, {"22", "é"}}},
			"ID  NAME\n1   alpha\n22  é\n"},
		{"numbers right", Table{Header: []string{"model", "n"}, Rows: [][]string{{"a", "5"}, {"bb", "10"}}, NumericRight: true},
			"model   n\na       5\nbb     10\n"},
		// A cell holds what a trace holds: its control characters are
		// replaced, a tab and a line break too (each one rune, so that the
		// columns stay aligned), and the header as well.
		{"control characters", Table{Header: []string{"ID", "TASK\x1b[2J"}, Rows: [][]string{{"a\x1b]0;title\x07", "x"}, {"b", "line\nbreak\ttab\r\u009b31m"}}},
			"ID           TASK\ufffd[2J\na\ufffd]0;title\ufffd  x\nb            line\ufffdbreak\ufffdtab\ufffd\ufffd31m\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		if err := tt.table.Write(&b); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("%s:\n%q\nwant\n%q", tt.name, b.String(), tt.want)
		}
	}
}

func TestTaskTitle(t *testing.T) {
	for in, want := range map[string]string{
		"**Task**: \n\nYou are an expert SRE.\n":        "You are an expert SRE.",
		"**Task**: Generate Remediation Plan\n\nmore":   "Task: Generate Remediation Plan",
		"# Heading:\n=====\nShort\nA longer first line": "A longer first line",
		"": "-",
	} {
		if got := TaskTitle(in, 80); got != want {
			t.Errorf("TaskTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPrintableLines(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "ls -la\n\ttotal 0\n", "ls -la\n\ttotal 0\n"},
		{"clear screen", "a\x1b[2J\x1b[3Jb", "a\ufffd[2J\ufffd[3Jb"},
		{"window title", "\x1b]0;pwned\x07 ok", "\ufffd]0;pwned\ufffd ok"},
		{"C1 CSI and DEL", "\u009b31mred\x7f", "\ufffd31mred\ufffd"},
		{"invalid UTF-8", "a\x9b31m", "a\ufffd31m"},
		{"CRLF line endings", "one\r\ntwo\r\n", "one\ntwo\n"},
		{"a carriage return inside a line", "safe\rrm -rf /", "safe\ufffdrm -rf /"},
		{"bell, backspace, NUL", "\a\b\x00x", "\ufffd\ufffd\ufffdx"},
		{"unicode text", "é — ✓ 日本", "é — ✓ 日本"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		if got := PrintableLines(tt.in); got != tt.want {
			t.Errorf("%s: PrintableLines(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}
