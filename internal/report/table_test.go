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
