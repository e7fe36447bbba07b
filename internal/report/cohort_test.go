package report

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/trace"
)

// hostile is a model name that tries markup, a link and a table break in
// every format, and a terminal escape in the text one.
const hostile = "<script>alert(1)</script>|[x](javascript:y)\x1b[31m"

// smallCohort has two models, one named hostile, with enough outcomes for
// the rule to call, a cascade and a harness failure.
func smallCohort(t *testing.T) *analyze.Report {
	t.Helper()
	var traces []*trace.Trace
	for i := range 24 {
		model := "plain"
		if i%2 == 1 {
			model = hostile
		}
		success := i%3 != 0
		score := 0.0
		if success {
			score = 1
		}
		tr := &trace.Trace{ID: fmt.Sprintf("t%02d", i), Format: "codex", Model: model}
		tr.Append(trace.Step{Kind: trace.KindMessage, Text: "x"})
		tr.Outcomes = []trace.Outcome{{Source: "itbench", Metric: "root_cause_recall", Score: &score, Success: &success}}
		present := func(mode string, step int) {
			tr.Findings = append(tr.Findings, trace.Finding{Mode: mode, Source: "human:a", Verdict: trace.Present, Steps: []int{step}})
		}
		if !success {
			present("FM-2.6", 2)
			present("FM-3.3", 5+i%2)
			if i%4 == 0 {
				present("FM-1.5", 9)
			}
		}
		if i%4 == 1 {
			present("FM-1.3", 3)
		}
		if i == 3 {
			present("SYS-1", 0)
		}
		traces = append(traces, tr)
	}
	r, err := analyze.BuildReport(context.Background(), storeOf(t, traces), analyze.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWriteEscapes(t *testing.T) {
	r := smallCohort(t)
	var text, md, html strings.Builder
	for _, w := range []struct {
		b      io.Writer
		format string
	}{{&text, "text"}, {&md, "md"}, {&html, "html"}} {
		if err := Write(w.b, r, w.format); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(text.String(), "\x1b") || !strings.Contains(text.String(), "<script>alert(1)</script>|[x](javascript:y)\uFFFD[31m") {
		t.Error("text: the escape character reached the terminal, or the name was mangled otherwise")
	}
	if !strings.Contains(md.String(), `\<script\>alert(1)\</script\>\|\[x\](javascript:y)`) || strings.Contains(md.String(), "<script>") {
		t.Errorf("markdown does not escape the name:\n%s", md.String())
	}
	page := html.String()
	if strings.Contains(page, "<script") || !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("HTML does not escape the name")
	}
	if err := Write(io.Discard, r, "pdf"); err == nil {
		t.Error("format pdf accepted")
	}
}

// TestHTMLSelfContained checks that the page needs nothing from outside
// and that every chart is well-formed SVG.
func TestHTMLSelfContained(t *testing.T) {
	var b strings.Builder
	if err := WriteHTML(&b, smallCohort(t)); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, banned := range []string{"<script", "<link", "<img", "src=", "@import", "url(http", "href=\"http"} {
		if strings.Contains(page, banned) {
			t.Errorf("page contains %q", banned)
		}
	}
	// The only absolute URL is the SVG namespace, which is a name, not a fetch.
	for _, u := range regexp.MustCompile(`https?://[^"' )]+`).FindAllString(page, -1) {
		if u != "http://www.w3.org/2000/svg" {
			t.Errorf("page refers to %s", u)
		}
	}
	svgs := regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAllString(page, -1)
	// Heat map, density, failed-against-successful bars for 3 groups, and
	// the cascade graphs of 3 groups.
	if len(svgs) != 8 {
		t.Errorf("%d charts, want 8", len(svgs))
	}
	for _, svg := range svgs {
		d := xml.NewDecoder(strings.NewReader(svg))
		for {
			_, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("chart is not well-formed: %v\n%s", err, svg)
			}
		}
	}
	for _, tag := range []string{"section", "table", "figure", "h2", "h3"} {
		if open, closed := strings.Count(page, "<"+tag+">")+strings.Count(page, "<"+tag+" "), strings.Count(page, "</"+tag+">"); open != closed {
			t.Errorf("<%s>: %d opened, %d closed", tag, open, closed)
		}
	}
	for _, id := range []string{"overview", "prevalence", "density", "fatal", "cooccurrence", "cascades", "interventions", "system"} {
		if !strings.Contains(page, `<section id="`+id+`">`) || !strings.Contains(page, `href="#`+id+`"`) {
			t.Errorf("no section %s, or no link to it", id)
		}
	}
}

func TestFormatting(t *testing.T) {
	for x, want := range map[float64]string{0.4857: "0.49", 0.15: "0.15", 0.0321: "0.032", 0.00474: "0.0047", 0.00009: "<0.0001", 1: "1.00"} {
		if got := probability(x); got != want {
			t.Errorf("probability(%v) = %q, want %q", x, got, want)
		}
	}
	for x, want := range map[float64]string{2.04: "2.0", 0.803: "0.80", 0.0045: "0.0045", 46.2: "46", 1141.2: "1141"} {
		if got := sig2(x); got != want {
			t.Errorf("sig2(%v) = %q, want %q", x, got, want)
		}
	}
	if got := Wrap("one two three four", 9, "  "); got != "  one two\n  three\n  four" {
		t.Errorf("wrap = %q", got)
	}
	if got := distributionText([]int{1, 0, 3}); got != "0:1 2:3" {
		t.Errorf("distribution = %q", got)
	}
}

// A cohort with no outcome says so once, at the top, and the sections that
// need outcomes say they do instead of "too few" for every group.
func TestReportWithoutOutcomes(t *testing.T) {
	var traces []*trace.Trace
	for i := range 6 {
		tr := &trace.Trace{ID: fmt.Sprintf("t%d", i), Format: "codex", Model: fmt.Sprintf("m%d", i%2)}
		tr.Append(trace.Step{Kind: trace.KindMessage, Text: "x"})
		tr.Findings = []trace.Finding{{Mode: "FM-1.3", Source: "human:a", Verdict: trace.Present, Steps: []int{0}}}
		traces = append(traces, tr)
	}
	r, err := analyze.BuildReport(context.Background(), storeOf(t, traces), analyze.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Write(&b, r, "text"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Count(out, "No trace has an outcome") != 1 || strings.Index(out, "No trace has an outcome") > strings.Index(out, "1. Overview") {
		t.Errorf("the missing outcomes are not said once at the top:\n%s", out)
	}
	if strings.Contains(out, "too few") || !strings.Contains(out, "Needs outcomes") {
		t.Errorf("sections still speak of too few outcomes:\n%s", out)
	}
}

// The report ends with what each code it names means, every mode and
// system code of the cohort once, and in HTML each mode's row of the
// prevalence table links there.
func TestGlossaryDefinesTheCodesNamed(t *testing.T) {
	r := smallCohort(t)
	var md strings.Builder
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	_, glossary, ok := strings.Cut(md.String(), "The modes named here")
	if !ok {
		t.Fatal("no glossary section")
	}
	for _, code := range []string{"FM-1.3", "FM-1.5", "FM-2.6", "FM-3.3", "SYS-1"} {
		if n := strings.Count(glossary, "\n"+code+" "); n != 1 {
			t.Errorf("%s defined %d times", code, n)
		}
	}
	if strings.Contains(glossary, "FM-2.1") {
		t.Error("a code the cohort does not have is defined")
	}
	var page strings.Builder
	if err := WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `<section id="modes">`) || !strings.Contains(page.String(), `<a href="#modes">FM-3.3 Incorrect verification</a>`) {
		t.Error("the HTML report's mode names do not link to the glossary")
	}
}
