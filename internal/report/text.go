package report

import (
	"io"
	"strings"
	"unicode"

	"github.com/faultline/faultline/internal/analyze"
)

// textWidth is where the text report wraps its prose.
const textWidth = 100

// WriteText prints a cohort report for a terminal: `faultline analyze`
// and `faultline report` print this.
func WriteText(w io.Writer, r *analyze.Report) error {
	d := buildDocument(r, false, nil)
	var b strings.Builder
	b.WriteString(Printable(d.Title) + "\n")
	for _, p := range d.Lead {
		b.WriteString(Wrap(Printable(p), textWidth, "") + "\n")
	}
	for _, s := range d.Sections {
		b.WriteString("\n" + Printable(s.Title) + "\n")
		for _, p := range s.Intro {
			b.WriteString(Wrap(Printable(p), textWidth, "") + "\n")
		}
		for _, bl := range s.Blocks {
			b.WriteString("\n")
			if bl.Heading != "" {
				b.WriteString(Printable(bl.Heading) + "\n")
			}
			if bl.Table != nil {
				// Table.Write makes each cell printable.
				if err := bl.Table.Write(&b); err != nil {
					return err
				}
			}
			for _, n := range bl.Notes {
				b.WriteString(Wrap(Printable(n), textWidth, "  ") + "\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Printable replaces control characters, which a model or group name taken
// from a trace could carry to the terminal, with U+FFFD.
func Printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '\uFFFD'
		}
		return r
	}, s)
}

// Wrap breaks prose into lines of at most width runes, each indented by
// indent.
func Wrap(s string, width int, indent string) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(s) {
		n := len([]rune(word))
		switch {
		case i == 0:
			b.WriteString(indent)
			line = len(indent)
		case line+1+n > width:
			b.WriteString("\n" + indent)
			line = len(indent)
		default:
			b.WriteString(" ")
			line++
		}
		b.WriteString(word)
		line += n
	}
	return b.String()
}
