package report

import (
	"strings"

	"github.com/faultline/faultline/internal/analyze"
)

// Traces names the traces behind a figure of a cohort report, so that a
// viewer that can list traces (faultline serve) can link the figure to
// them: the traces of a group (Group "" for the whole cohort) with the
// given outcome ("success", "failure", or "" for any) on which the
// report's sources mark every mode in Modes present and, when ModeCount is
// set, exactly that many distinct MAST modes.
type Traces struct {
	Group     string
	Outcome   string
	Modes     []string
	ModeCount *int
}

// LinkFunc gives the address (relative to the page: "/…" or "?…") of the
// list of the traces behind a figure.
type LinkFunc func(Traces) string

// linker attaches links to a document's figures; the zero value, for
// reports with nowhere to link to, attaches none.
type linker struct {
	f   LinkFunc
	all *analyze.Group // the group that stands for the whole cohort
}

// to is the address of the traces of group g with the outcome and modes.
func (l linker) to(g *analyze.Group, outcome string, modes ...string) string {
	return l.traces(g, Traces{Outcome: outcome, Modes: modes})
}

func (l linker) traces(g *analyze.Group, t Traces) string {
	if l.f == nil {
		return ""
	}
	if g != l.all {
		t.Group = g.Name
	}
	return safeHref(l.f(t))
}

// safeHref keeps only addresses relative to the page: the charts write
// them into SVG by hand, outside html/template's URL filtering.
func safeHref(href string) string {
	if strings.HasPrefix(href, "/") && !strings.HasPrefix(href, "//") || strings.HasPrefix(href, "?") {
		return href
	}
	return ""
}
