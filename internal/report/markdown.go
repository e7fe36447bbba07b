package report

import (
	"io"
	"strings"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/trace"
)

// WriteMarkdown writes a cohort report as GitHub-flavoured Markdown: the
// text report's tables as pipe tables, under headings.
func WriteMarkdown(w io.Writer, r *analyze.Report) error {
	d := buildDocument(r, false, nil)
	var b strings.Builder
	b.WriteString("# " + mdEscape(d.Title) + "\n\n")
	for _, p := range d.Lead {
		b.WriteString(mdEscape(p) + "\n\n")
	}
	for _, s := range d.Sections {
		b.WriteString("## " + mdEscape(s.Title) + "\n\n")
		for _, p := range s.Intro {
			b.WriteString(mdEscape(p) + "\n\n")
		}
		for _, bl := range s.Blocks {
			if bl.Heading != "" {
				level := "### "
				if bl.Sub {
					level = "#### "
				}
				b.WriteString(level + mdEscape(bl.Heading) + "\n\n")
			}
			if bl.Table != nil {
				mdTable(&b, bl.Table)
				b.WriteString("\n")
			}
			for _, n := range bl.Notes {
				b.WriteString(mdEscape(n) + "\n\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdTable(b *strings.Builder, t *Table) {
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + mdEscape(c) + " |")
		}
		b.WriteString("\n")
	}
	row(t.Header)
	b.WriteString("|")
	for i := range t.Header {
		if t.NumericRight && i > 0 {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		row(r)
	}
}

// mdEscape backslash-escapes the characters that Markdown or the HTML it
// may contain would interpret inside a paragraph or a table cell, so that a
// name from a trace can neither break a table nor inject markup. Brackets
// only make a link followed by a parenthesis or another bracket, so they
// are left alone elsewhere and intervals read [5–70], not \[5–70\].
// Line breaks become spaces.
func mdEscape(s string) string {
	s = Printable(trace.NormalizeSpace(s))
	special := "\\`*_<>|~&"
	if strings.Contains(s, "](") || strings.Contains(s, "][") {
		special += "[]"
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(special, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
