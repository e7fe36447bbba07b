package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/report"
)

// issuePrinter prints ingest problems as they are found, but each kind only
// once per file: a dataset with the same notice on every record gets its
// first in full and, at the end, one line counting the others with their
// lines. Paths under the working directory are printed relative to it.
type issuePrinter struct {
	w      io.Writer
	cwd    string
	groups map[issueKind]*issueGroup
	order  []issueKind
}

// issueKind is a problem's severity, file and message with its numbers
// blanked: "record 3 (line 353): 2 label(s) ..." and "record 4 (line 470):
// 2 label(s) ..." are one kind.
type issueKind struct{ severity, path, shape string }

type issueGroup struct {
	first  ingest.Issue
	others []int // the lines of the others, 0 for a problem of the whole file
}

func newIssuePrinter(w io.Writer) *issuePrinter {
	cwd, _ := os.Getwd()
	return &issuePrinter{w: w, cwd: cwd, groups: map[issueKind]*issueGroup{}}
}

var digits = regexp.MustCompile(`[0-9]+`)

func (p *issuePrinter) print(i ingest.Issue) {
	k := issueKind{i.Severity.String(), i.Path, digits.ReplaceAllString(i.Message, "#")}
	if g := p.groups[k]; g != nil {
		g.others = append(g.others, i.Line)
		return
	}
	p.groups[k] = &issueGroup{first: i}
	p.order = append(p.order, k)
	i.Path = p.display(i.Path)
	fmt.Fprintf(p.w, "%s: %s\n", i.Severity, report.PrintableLines(i.String()))
}

// flush prints, per kind that came more than once, how many more there were
// and where.
func (p *issuePrinter) flush() {
	for _, k := range p.order {
		g := p.groups[k]
		if len(g.others) == 0 {
			continue
		}
		where := ""
		if g.others[0] > 0 {
			var lines []string
			for _, l := range g.others[:min(len(g.others), 8)] {
				lines = append(lines, fmt.Sprint(l))
			}
			if len(g.others) > 8 {
				lines = append(lines, "…")
			}
			where = ", at lines " + strings.Join(lines, ", ")
		}
		like := "the one above"
		if g.first.Line > 0 {
			like = fmt.Sprintf("the one at line %d", g.first.Line)
		}
		fmt.Fprintf(p.w, "%s: %s: %d more like %s%s\n", k.severity, report.Printable(p.display(k.path)), len(g.others), like, where)
	}
}

// display shortens a path under the working directory to a relative one.
func (p *issuePrinter) display(path string) string {
	if p.cwd == "" || !filepath.IsAbs(path) {
		return path
	}
	if rel, err := filepath.Rel(p.cwd, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}
