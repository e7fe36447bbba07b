package report

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Table lays out rows of cells in aligned columns for a terminal: the first
// column (a name) left-aligned and, when NumericRight is set, the others
// right-aligned.
type Table struct {
	Header       []string
	Rows         [][]string
	NumericRight bool
	// Links holds, for the HTML form, the address each cell of a row links
	// to ("" for none); rows past its end link nowhere.
	Links [][]string
}

// add appends a row with the addresses its first cells link to.
func (t *Table) add(row []string, links ...string) {
	for len(t.Links) < len(t.Rows) {
		t.Links = append(t.Links, nil)
	}
	t.Rows = append(t.Rows, row)
	t.Links = append(t.Links, links)
}

// link is the address cell col of row links to, "" for none.
func (t *Table) link(row, col int) string {
	if row < len(t.Links) && col < len(t.Links[row]) {
		return t.Links[row][col]
	}
	return ""
}

// Write prints the table with two spaces between columns. A cell is one
// line of printable text: its control characters (a tab or a line break
// too, which would break the layout) are replaced, since cells carry what
// traces hold.
func (t *Table) Write(w io.Writer) error {
	all := make([][]string, 0, 1+len(t.Rows))
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		clean := make([]string, len(row))
		for i, cell := range row {
			clean[i] = Printable(cell)
		}
		all = append(all, clean)
	}
	var widths []int
	for _, row := range all {
		for i, cell := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	var b strings.Builder
	for _, row := range all {
		for i, cell := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			last := i == len(row)-1
			switch {
			case t.NumericRight && i > 0:
				b.WriteString(pad + cell)
			case last:
				b.WriteString(cell)
			default:
				b.WriteString(cell + pad)
			}
			if !last {
				b.WriteString("  ")
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// PrintableLines makes text laid out in lines safe for a terminal: each
// line as printable makes it, with its tabs and line breaks kept (and the
// carriage return of a CRLF line ending dropped), so that text from a trace
// (tool output, a message) keeps its layout but can never drive the
// terminal: no escape sequence, no title change, no clearing of the screen.
func PrintableLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		cells := strings.Split(strings.TrimSuffix(line, "\r"), "\t")
		for j, c := range cells {
			cells[j] = Printable(c)
		}
		lines[i] = strings.Join(cells, "\t")
	}
	return strings.Join(lines, "\n")
}

// WriteMarkdown prints the table as a GitHub-flavoured Markdown pipe table.
func (t *Table) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	mdTable(&b, t)
	_, err := io.WriteString(w, b.String())
	return err
}
