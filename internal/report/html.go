package report

import (
	_ "embed"
	"html/template"
	"io"

	"github.com/faultline/faultline/internal/analyze"
)

//go:embed report.css
var reportCSS string

// htmlPage is one self-contained file: CSS inline, charts as inline SVG,
// no script and nothing to fetch. html/template escapes every string that
// comes from a trace; only the charts, built by svg.go with their own
// escaping, are inserted as HTML. Its "sections" template, the report
// without the page around it, is what faultline serve's dashboard shows.
var htmlPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"numeric": func(t *Table, col int) bool { return t.NumericRight && col > 0 },
	"link":    func(t *Table, row, col int) string { return t.link(row, col) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Doc.Title}}</title>
<style>{{.CSS}}</style>
</head>
<body>
<h1>{{.Doc.Title}}</h1>
{{template "sections" .}}
<footer>Written by faultline. The same report as JSON: faultline report --format json (schema {{.Schema}}).</footer>
</body>
</html>
{{define "sections"}}{{range .Doc.Lead}}<p class="lead">{{.}}</p>
{{end}}<nav><ol>{{range .Doc.Sections}}<li><a href="#{{.ID}}">{{.Title}}</a></li>{{end}}</ol></nav>
{{range .Doc.Sections}}
<section id="{{.ID}}">
<h2>{{.Title}}</h2>
{{range .Intro}}<p>{{.}}</p>
{{end}}{{range .Blocks}}{{if .Heading}}{{if .Sub}}<h4>{{.Heading}}</h4>{{else}}<h3>{{.Heading}}</h3>{{end}}
{{end}}{{if .Chart}}<figure>{{.Chart}}</figure>
{{end}}{{with .Table}}{{$t := .}}<div class="table"><table>
<thead><tr>{{range $i, $h := .Header}}<th{{if numeric $t $i}} class="num"{{end}}>{{$h}}</th>{{end}}</tr></thead>
<tbody>
{{range $r, $row := .Rows}}<tr>{{range $i, $c := $row}}<td{{if numeric $t $i}} class="num"{{end}}>{{with link $t $r $i}}<a href="{{.}}">{{$c}}</a>{{else}}{{$c}}{{end}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{end}}{{range .Notes}}<p class="note">{{.}}</p>
{{end}}{{end}}</section>
{{end}}{{end}}`))

// WriteHTML writes a cohort report as one self-contained HTML page with
// charts: a heat map of modes by group, failed-against-successful bars per
// group, the density distribution and a cascade graph per group, each above
// the table with its numbers.
func WriteHTML(w io.Writer, r *analyze.Report) error {
	return htmlPage.Execute(w, struct {
		Doc    *document
		CSS    template.CSS
		Schema string
	}{buildDocument(r, true, nil), template.CSS(reportCSS), analyze.ReportSchema})
}

// WriteHTMLSections writes the report as WriteHTML does without the page
// around it (no title, style or footer), for a page of another's, with
// every figure linked to its traces by link.
func WriteHTMLSections(w io.Writer, r *analyze.Report, link LinkFunc) error {
	return htmlPage.ExecuteTemplate(w, "sections", struct{ Doc *document }{buildDocument(r, true, link)})
}

// CSS is the report's style sheet, for pages that show its sections.
func CSS() string { return reportCSS }
