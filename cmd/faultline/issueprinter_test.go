package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/faultline/faultline/ingest"
)

// The same problem on many records of a file prints once, then a count
// with the lines; other kinds and other files print on their own.
func TestIssuePrinterGroups(t *testing.T) {
	var b strings.Builder
	p := newIssuePrinter(&b)
	p.cwd = "/data"
	for line := 2; line <= 1200; line += 100 {
		p.print(ingest.Issue{Path: "/data/mad.json", Line: line, Severity: ingest.Notice, Message: fmt.Sprintf("record %d: 2 label(s) not mapped", line)})
	}
	p.print(ingest.Issue{Path: "/data/mad.json", Line: 5, Severity: ingest.Error, Message: "not a valid record"})
	p.print(ingest.Issue{Path: "/elsewhere/x.json", Line: 3, Severity: ingest.Notice, Message: "record 1: 2 label(s) not mapped"})
	p.flush()
	want := "notice: mad.json:2: record 2: 2 label(s) not mapped\n" +
		"error: mad.json:5: not a valid record\n" +
		"notice: /elsewhere/x.json:3: record 1: 2 label(s) not mapped\n" +
		"notice: mad.json: 11 more like the one at line 2, at lines 102, 202, 302, 402, 502, 602, 702, 802, …\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
