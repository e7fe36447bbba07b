package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// With a link function, every figure of the sections links to its traces:
// table cells and chart marks alike, each address built from the figure's
// group, outcome and modes, and escaped where it is written.
func TestHTMLSectionsLink(t *testing.T) {
	r := smallCohort(t)
	var asked []Traces
	link := func(tr Traces) string {
		asked = append(asked, tr)
		q := url.Values{"group": {tr.Group}, "outcome": {tr.Outcome}, "mode": tr.Modes}
		if tr.ModeCount != nil {
			q.Set("modes", fmt.Sprint(*tr.ModeCount))
		}
		return "/traces?" + q.Encode()
	}
	var b strings.Builder
	if err := WriteHTMLSections(&b, r, link); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "<html") || strings.Contains(page, "<style") || !strings.Contains(page, `<section id="prevalence">`) {
		t.Error("sections are not the report without its page")
	}
	// The hostile group's links carry its name encoded, never as markup.
	if strings.Contains(page, "<script") {
		t.Error("a name reached the page as markup")
	}
	want := "/traces?group=%3Cscript%3Ealert%281%29%3C%2Fscript%3E%7C%5Bx%5D%28javascript%3Ay%29%1B%5B31m&amp;mode=FM-2.6&amp;outcome=failure"
	if !strings.Contains(page, `<a href="`+want+`">`) {
		t.Errorf("no link to the hostile group's failed traces with FM-2.6")
	}
	svgs := regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAllString(page, -1)
	if len(svgs) != 8 {
		t.Fatalf("%d charts", len(svgs))
	}
	for _, svg := range svgs {
		if !strings.Contains(svg, `<a href="/traces?`) {
			t.Errorf("a chart links nowhere: %.80s", svg)
		}
		d := xml.NewDecoder(strings.NewReader(svg))
		for {
			if _, err := d.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("chart is not well-formed: %v", err)
			}
		}
	}
	// The density bars ask for a number of modes; the whole cohort is no group.
	counted, whole := false, false
	for _, tr := range asked {
		counted = counted || (tr.ModeCount != nil && tr.Outcome == "failure")
		whole = whole || tr.Group == ""
	}
	if !counted || !whole {
		t.Errorf("mode counts asked %v, whole cohort asked %v", counted, whole)
	}

	// An address that is not relative to the page is dropped, not written.
	b.Reset()
	if err := WriteHTMLSections(&b, r, func(Traces) string { return "javascript:alert(1)" }); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "javascript:alert(1)") || strings.Contains(b.String(), "<a href=\"j") {
		t.Error("a javascript: address was written")
	}
	for _, bad := range []string{"//evil.example/x", "https://evil.example", "javascript:x", ""} {
		if safeHref(bad) != "" {
			t.Errorf("safeHref(%q) kept", bad)
		}
	}
}
