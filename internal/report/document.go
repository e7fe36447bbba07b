package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/score"
	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/taxonomy"
)

// Formats a cohort report can be written in.
var Formats = []string{"text", "md", "html", "json"}

// Write writes a cohort report in one of Formats.
func Write(w io.Writer, r *analyze.Report, format string) error {
	switch format {
	case "text":
		return WriteText(w, r)
	case "md":
		return WriteMarkdown(w, r)
	case "html":
		return WriteHTML(w, r)
	case "json":
		return WriteJSON(w, r)
	}
	return fmt.Errorf("unknown report format %q: use one of %s", format, strings.Join(Formats, ", "))
}

// A cohort report is laid out once as a document, then written as text,
// Markdown or HTML, so that the three say the same thing in the same order.
type document struct {
	Title    string
	Lead     []string
	Sections []section
}

type section struct {
	ID, Title string
	Intro     []string
	Blocks    []block
}

// block is one table with what surrounds it: a heading (usually a group's
// name), notes under it, and in HTML a chart above it.
type block struct {
	Heading string
	Sub     bool          // the heading is under the previous block's
	Chart   template.HTML // inline SVG, HTML only
	Table   *Table
	Notes   []string
}

// maxListed caps the pairs and transitions listed per group; the JSON form
// has them all.
const maxListed = 10

// buildDocument lays out the report; charts are drawn only when asked for,
// and figures link to their traces only when given a link.
func buildDocument(r *analyze.Report, charts bool, link LinkFunc) *document {
	l := linker{f: link, all: r.All}
	d := &document{Title: fmt.Sprintf("faultline cohort report: %s by %s", text.Plural(r.Traces, "trace", "traces"), r.By)}
	d.Lead = append(d.Lead,
		fmt.Sprintf("Sources: %s. A MAST mode counts as present on a trace when any of them marks it present.", sourcesText(r)),
		"Outcome: each trace's primary outcome (labels, then faultline's scoring, then the official one). "+
			"Intervals are 95%: Wilson for shares, Student t for means.",
	)
	if !r.HasOutcomes() {
		d.Lead = append(d.Lead, noOutcomesText)
	}
	groups := append(append([]*analyze.Group{}, r.Groups...), r.All)
	d.add(overviewSection(r, groups, l))
	if r.Compare != nil {
		d.add(compareSection(r))
	}
	d.add(prevalenceSection(r, groups, charts, l))
	d.add(densitySection(r, groups, charts, l))
	d.add(fatalSection(r, groups, charts, l))
	d.add(cooccurrenceSection(groups, l))
	d.add(cascadeSection(groups, charts, l))
	d.add(interventionSection(r, groups, l))
	if s, ok := systemSection(r, groups, l); ok {
		d.add(s)
	}
	if s, ok := customSection(r, groups, l); ok {
		d.add(s)
	}
	if s, ok := glossarySection(r); ok {
		d.add(s)
	}
	return d
}

// glossarySection defines the codes the report names, so that a reader of
// the file alone need not look them up; in HTML every mode's name in the
// prevalence table links to it.
func glossarySection(r *analyze.Report) (section, bool) {
	var codes []string
	for _, m := range r.All.Modes {
		codes = append(codes, m.Mode)
	}
	for _, c := range r.All.System.Codes {
		codes = append(codes, c.Code)
	}
	s := section{ID: glossaryID, Title: "The modes named here",
		Intro: []string{"What each code means (faultline modes CODE prints its example, the detectors that look for it and the intervention that addresses it)."}}
	var notes []string
	for _, code := range codes {
		m, _, ok := taxonomy.Lookup(code)
		if !ok {
			continue
		}
		notes = append(notes, fmt.Sprintf("%s %s: %s", m.Code, m.Name, m.Definition))
	}
	if len(notes) == 0 {
		return section{}, false
	}
	s.Blocks = []block{{Notes: notes}}
	return s, true
}

// glossaryID is the anchor of the glossary section.
const glossaryID = "modes"

const noOutcomesText = "No trace has an outcome (no ground truth was found beside the runs, and their files record none), " +
	"so which modes are fatal cannot be told: give analyze --ground-truth DIR, or store outcomes with faultline score --labels FILE."

func (d *document) add(s section) {
	s.Title = fmt.Sprintf("%d. %s", len(d.Sections)+1, s.Title)
	d.Sections = append(d.Sections, s)
}

func sourcesText(r *analyze.Report) string {
	if len(r.Sources) == 0 {
		if len(r.SourceSelection) > 0 {
			return "none of " + strings.Join(r.SourceSelection, ", ") + " annotated these traces"
		}
		return "none (no trace has been annotated)"
	}
	return strings.Join(r.Sources, ", ")
}

func overviewSection(r *analyze.Report, groups []*analyze.Group, l linker) section {
	s := section{ID: "overview", Title: "Overview"}
	t := &Table{Header: []string{r.By, "traces", "succeeded", "failed", "unknown", "success rate"}, NumericRight: true}
	// One metric names the column; when groups score differently (a
	// tau-bench reward beside an ITBench recall) each cell names its own.
	var metrics []string
	for _, g := range groups {
		if g.Metric != nil && !slices.Contains(metrics, g.Metric.Name) {
			metrics = append(metrics, g.Metric.Name)
		}
	}
	metric := ""
	switch len(metrics) {
	case 0:
	case 1:
		metric = metrics[0]
	default:
		metric = "score"
	}
	if metric != "" {
		t.Header = append(t.Header, "mean "+metric)
	}
	t.Header = append(t.Header, "with MAST modes")
	for _, src := range r.Sources {
		t.Header = append(t.Header, "by "+src)
	}
	for _, g := range groups {
		row := []string{g.Name, fmt.Sprint(g.Traces), fmt.Sprint(g.Succeeded), fmt.Sprint(g.Failed), fmt.Sprint(g.Unknown), shareWithInterval(g.SuccessRate)}
		if metric != "" {
			cell := metricText(g.Metric)
			if len(metrics) > 1 && g.Metric != nil {
				cell += " (" + g.Metric.Name + ")"
			}
			row = append(row, cell)
		}
		row = append(row, countShare(analyze.Proportion{K: g.WithModes, N: g.Traces}))
		for _, a := range g.Annotated {
			row = append(row, percent(a.Proportion))
		}
		all := l.to(g, "")
		t.add(row, all, all, l.to(g, "success"), l.to(g, "failure"), l.to(g, "unknown"))
	}
	notes := []string{"Success rate is over the traces with a decided outcome; \"unknown\" traces have none."}
	if why := unknownWhy(r.All); why != "" {
		notes = append(notes, why)
	}
	if metric != "" {
		notes = append(notes, fmt.Sprintf("Mean %s is over the primary outcomes that carry a score.", metric))
	}
	if len(metrics) > 1 {
		notes = append(notes, "The groups are scored by different metrics, named in each cell: their means do not compare.")
	}
	notes = append(notes, mergedNames(groups)...)
	if len(r.Sources) > 0 {
		notes = append(notes, "\"by <source>\" is the share of traces a source annotated (any verdict; for the detectors, a run of the detector set).")
	}
	s.Blocks = []block{{Table: t, Notes: notes}}
	return s
}

// mergedNames says, for each group whose canonical model name merged
// others, how else its traces write it.
func mergedNames(groups []*analyze.Group) []string {
	var notes []string
	for _, g := range groups {
		if len(g.AlsoWrittenAs) > 0 {
			notes = append(notes, fmt.Sprintf("%s is also written as %s.", g.Name, strings.Join(g.AlsoWrittenAs, ", ")))
		}
	}
	return notes
}

// unknownWhy words why a scorer left traces of the group undecided, ""
// when it left none.
func unknownWhy(g *analyze.Group) string {
	if g == nil || len(g.UnknownWhy) == 0 {
		return ""
	}
	statuses := make([]string, 0, len(g.UnknownWhy))
	for st := range g.UnknownWhy {
		statuses = append(statuses, st)
	}
	sort.Strings(statuses)
	var parts []string
	for _, st := range statuses {
		n := g.UnknownWhy[st]
		switch score.Status(st) {
		case score.NotDiagnosis:
			parts = append(parts, fmt.Sprintf("%s not a root-cause diagnosis (a remediation plan, say), which root-cause ground truth does not grade", text.Plural(n, "trace is", "traces are")))
		case score.Unreadable:
			parts = append(parts, fmt.Sprintf("%s the answer file in a way the trace does not show", text.Plural(n, "trace wrote", "traces wrote")))
		default:
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	return "Left unscored: " + strings.Join(parts, "; ") + "."
}

func prevalenceSection(r *analyze.Report, groups []*analyze.Group, charts bool, l linker) section {
	s := section{ID: "prevalence", Title: "Mode prevalence"}
	codes := modesSeen(groups)
	if len(codes) == 0 {
		s.Intro = []string{"No MAST mode was found on any trace."}
		return s
	}
	s.Intro = []string{"Share of traces with each MAST mode, by " + r.By + ", then in each group split by outcome."}
	matrix := &Table{Header: []string{"mode"}, NumericRight: true}
	for _, g := range groups {
		matrix.Header = append(matrix.Header, g.Name)
	}
	for _, code := range codes {
		row := []string{code + " " + modeNameOf(groups, code)}
		links := []string{"#" + glossaryID}
		for _, g := range groups {
			row = append(row, countShare(g.Mode(code).All))
			links = append(links, l.to(g, "", code))
		}
		matrix.add(row, links...)
	}
	first := block{Table: matrix}
	if charts {
		first.Chart = heatMap(groups, codes, l)
	}
	s.Blocks = append(s.Blocks, first)
	for _, g := range groups {
		if len(g.Modes) == 0 {
			continue
		}
		t := &Table{Header: []string{"mode", "all traces", "failed", "succeeded"}, NumericRight: true}
		for _, m := range g.Modes {
			t.add([]string{m.Mode + " " + m.Name, shareWithInterval(m.All), shareWithInterval(m.Failed), shareWithInterval(m.Succeeded)},
				"", l.to(g, "", m.Mode), l.to(g, "failure", m.Mode), l.to(g, "success", m.Mode))
		}
		s.Blocks = append(s.Blocks, block{Heading: groupHeading(g), Table: t})
	}
	return s
}

func densitySection(r *analyze.Report, groups []*analyze.Group, charts bool, l linker) section {
	s := section{ID: "density", Title: "Failure density", Intro: []string{
		"Distinct MAST modes per failed trace (successful traces for contrast). " +
			"Few modes per failure reads as isolated mistakes; many as a cascade in which one error brings on others.",
	}}
	harness := r.All.Density.HarnessOnly > 0
	t := &Table{Header: []string{r.By, "failed traces", "modes per failed trace"}, NumericRight: true}
	if harness {
		t.Header = append(t.Header, "harness-only failures", "modes per other failed trace")
	}
	t.Header = append(t.Header, "per successful trace", "distribution (modes:failed traces)")
	for _, g := range groups {
		row := []string{g.Name, fmt.Sprint(g.Failed), meanText(g.Density.Failed, 1, false)}
		if harness {
			row = append(row, fmt.Sprint(g.Density.HarnessOnly), meanText(g.Density.AgentFailed, 1, false))
		}
		failed := l.to(g, "failure")
		t.add(append(row, meanText(g.Density.Succeeded, 1, false), distributionText(g.Density.Distribution)), failed, failed)
	}
	b := block{Table: t}
	if harness {
		b.Notes = append(b.Notes, "Harness-only failures show a harness or infrastructure failure (section \"Harness and infrastructure failures\") and no MAST mode: "+
			"the run was cut short before the agent could fail on its own. They count as failures with no mode in every figure of this report; "+
			"the density of the other failed traces leaves them out.")
	}
	if charts {
		b.Chart = densityChart(groups, l)
	}
	s.Blocks = []block{b}
	return s
}

func fatalSection(r *analyze.Report, groups []*analyze.Group, charts bool, l linker) section {
	tests := "No group has enough outcomes to test."
	if r.Tests > 0 {
		tests = fmt.Sprintf("q-values are adjusted over the %s of this report.", text.Plural(r.Tests, "test", "tests"))
	}
	s := section{ID: "fatal", Title: "Fatal and non-fatal modes", Intro: []string{
		"Rule: " + r.Rule.Text,
		tests + " Lift is how much more common a mode is in failed traces than in successful ones; " +
			"the odds ratio compares the same odds (* marks a table with a zero cell, to every cell of which 0.5 was added).",
	}}
	if !r.HasOutcomes() {
		s.Intro = []string{"Needs outcomes, and no trace has one (see the top of the report)."}
		return s
	}
	for _, g := range groups {
		if len(g.Modes) == 0 {
			continue
		}
		t := &Table{Header: []string{"mode", "in failed", "in successful", "difference", "lift", "odds ratio", "p", "q", "class"}, NumericRight: true}
		for _, m := range g.Modes {
			row := []string{m.Mode + " " + m.Name, percent(m.Failed), percent(m.Succeeded), pointsText(m.Difference), liftText(m), oddsRatioText(m.OddsRatio)}
			row = append(row, pText(m.Test), qText(m.Test), classText(m))
			t.add(row, "", l.to(g, "failure", m.Mode), l.to(g, "success", m.Mode))
		}
		b := block{Heading: groupHeading(g), Table: t}
		if note := callNote(r.Rule, g); note != "" {
			b.Notes = append(b.Notes, note)
		}
		if charts {
			b.Chart = outcomeBars(g, l)
		}
		s.Blocks = append(s.Blocks, b)
	}
	if len(s.Blocks) == 0 {
		s.Intro = append(s.Intro, "No MAST mode was found, so there is nothing to call.")
	}
	return s
}

// callNote says in words why a group's modes are not called, "" when they are.
func callNote(rule analyze.Rule, g *analyze.Group) string {
	why := uncalledText(rule, g)
	if why == "" {
		return ""
	}
	return strings.ToUpper(why[:1]) + why[1:] + ". The figures are shown, the verdicts withheld."
}

// uncalledText says why the rule does not call a group's modes: which side
// falls short of its minimum, or both, with the counts; "" when it calls
// them.
func uncalledText(rule analyze.Rule, g *analyze.Group) string {
	class := rule.Uncalled(g)
	if class == "" {
		return ""
	}
	var short []string
	if g.Succeeded < rule.MinSucceeded {
		short = append(short, fmt.Sprintf("%s of the %d needed", text.Plural(g.Succeeded, "successful trace", "successful traces"), rule.MinSucceeded))
	}
	if g.Failed < rule.MinFailed {
		short = append(short, fmt.Sprintf("%s of the %d needed", text.Plural(g.Failed, "failed trace", "failed traces"), rule.MinFailed))
	}
	return classNames[class] + " to call: " + strings.Join(short, " and ")
}

func cooccurrenceSection(groups []*analyze.Group, l linker) section {
	s := section{ID: "cooccurrence", Title: "Co-occurrence", Intro: []string{
		"Pairs of modes found on the same trace, over all traces of a group. Lift above 1 means the two go together more often than independent modes would; " +
			"phi is their correlation; P(B | A) the share of traces with A that also show B.",
	}}
	for _, g := range groups {
		if len(g.Pairs) == 0 {
			continue
		}
		t := &Table{Header: []string{"modes A and B", "both", "P(B | A)", "P(A | B)", "lift", "phi"}, NumericRight: true}
		for _, p := range g.Pairs[:min(len(g.Pairs), maxListed)] {
			phi := "-"
			if p.Phi != nil {
				phi = fmt.Sprintf("%.2f", *p.Phi)
			}
			both := l.to(g, "", p.A, p.B)
			t.add([]string{p.A + " and " + p.B, fmt.Sprint(p.Both), fmt.Sprintf("%.0f%%", 100*p.BGivenA), fmt.Sprintf("%.0f%%", 100*p.AGivenB), fmt.Sprintf("%.2f", p.Lift), phi},
				both, both)
		}
		b := block{Heading: groupHeading(g), Table: t}
		if more := len(g.Pairs) - maxListed; more > 0 {
			b.Notes = append(b.Notes, fmt.Sprintf("%s more in the JSON form.", text.Plural(more, "pair", "pairs")))
		}
		s.Blocks = append(s.Blocks, b)
	}
	if len(s.Blocks) == 0 {
		s.Intro = append(s.Intro, "No trace shows two modes.")
	}
	return s
}

func cascadeSection(groups []*analyze.Group, charts bool, l linker) section {
	s := section{ID: "cascades", Title: "Cascades", Intro: []string{
		"In each failed trace, MAST modes in the order they first appear (a mode's first appearance is the earliest step its findings cite first; " +
			"modes no finding locates are left out and counted). The onset is the mode that comes first; a transition A → B means B came directly after A.",
	}}
	for _, g := range groups {
		c := g.Cascades
		if c.Failed == 0 {
			continue
		}
		var notes []string
		notes = append(notes, fmt.Sprintf("Ordered: %d of the %s with MAST modes", c.Ordered, text.Plural(c.Failed, "failed trace", "failed traces"))+
			unlocatedText(c)+".")
		if c.Ordered == 0 {
			s.Blocks = append(s.Blocks, block{Heading: g.Name, Notes: notes})
			continue
		}
		t := &Table{Header: []string{"onset mode", "cascades", "modes that follow"}, NumericRight: true}
		for _, o := range c.Onsets {
			// The failed traces with the mode: the cascades it began are among them.
			t.add([]string{o.Mode + " " + o.Name, fmt.Sprint(o.Traces), meanText(o.Followers, 1, false)}, "", l.to(g, "failure", o.Mode))
		}
		notes = append(notes, onsetTestText(c))
		b := block{Heading: g.Name, Table: t, Notes: notes}
		if charts {
			b.Chart = cascadeGraph(g, l)
		}
		s.Blocks = append(s.Blocks, b)
		if len(c.Transitions) > 0 {
			tt := &Table{Header: []string{"transition", "cascades"}, NumericRight: true}
			for _, tr := range c.Transitions[:min(len(c.Transitions), maxListed)] {
				tt.add([]string{tr.From + " → " + tr.To, fmt.Sprint(tr.Count)}, "", l.to(g, "failure", tr.From, tr.To))
			}
			tb := block{Table: tt}
			if more := len(c.Transitions) - maxListed; more > 0 {
				tb.Notes = append(tb.Notes, fmt.Sprintf("%s more in the JSON form.", text.Plural(more, "transition", "transitions")))
			}
			s.Blocks = append(s.Blocks, tb)
		}
	}
	if len(s.Blocks) == 0 {
		s.Intro = append(s.Intro, "No failed trace shows a MAST mode.")
	}
	return s
}

func unlocatedText(c analyze.Cascades) string {
	var parts []string
	if c.Unlocated > 0 {
		parts = append(parts, fmt.Sprintf("%s left out for want of a location", text.Plural(c.Unlocated, "mode occurrence", "mode occurrences")))
	}
	if c.Ties > 0 {
		parts = append(parts, fmt.Sprintf("%d with modes first seen at the same step, ordered by code", c.Ties))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

func onsetTestText(c analyze.Cascades) string {
	t := c.OnsetTest
	if t == nil {
		return "Whether the onset predicts how many modes follow cannot be tested here: it needs two onset modes and some variation in what follows."
	}
	return fmt.Sprintf("Does the onset predict how many modes follow? One-way ANOVA: F(%g, %g) = %.2f, p %s, q %s; the onset explains %.0f%% of the variation (η²).",
		t.DF1, t.DF2, t.F, pText(t.Test), qText(t.Test), 100*t.EtaSquared)
}

func interventionSection(r *analyze.Report, groups []*analyze.Group, l linker) section {
	s := section{ID: "interventions", Title: "Interventions", Intro: []string{
		"From each group's fatal modes, the taxonomy's interventions, those reaching the most failed traces first. A mode not called fatal leads to no recommendation.",
	}}
	if !r.HasOutcomes() {
		s.Intro = []string{"Needs fatal modes, and so outcomes, which no trace has (see the top of the report)."}
		return s
	}
	for _, g := range groups {
		if len(g.Interventions) == 0 {
			reason := "no mode is fatal under the rule"
			if why := uncalledText(r.Rule, g); why != "" {
				reason = why
			}
			s.Blocks = append(s.Blocks, block{Heading: g.Name, Notes: []string{"Nothing to recommend: " + reason + "."}})
			continue
		}
		s.Blocks = append(s.Blocks, block{Heading: g.Name})
		for _, rec := range g.Interventions {
			t := &Table{Header: []string{"fatal mode", "in failed", "in successful", "lift", "odds ratio", "q"}, NumericRight: true}
			for _, m := range rec.Modes {
				t.add([]string{m.Mode + " " + m.Name, percent(m.Failed), percent(m.Succeeded), liftText(m), oddsRatioText(m.OddsRatio), qText(m.Test)},
					"", l.to(g, "failure", m.Mode), l.to(g, "success", m.Mode))
			}
			s.Blocks = append(s.Blocks, block{
				Heading: fmt.Sprintf("%d. %s: reaches %d of %d failed traces (%s)", rec.Rank, rec.Name, rec.Failed.K, rec.Failed.N, percent(rec.Failed)),
				Sub:     true,
				Table:   t,
				Notes:   []string{rec.Description, "Read first: " + strings.Join(rec.Examples, ", ")},
			})
		}
	}
	return s
}

func systemSection(r *analyze.Report, groups []*analyze.Group, l linker) (section, bool) {
	var codes []string
	names := map[string]string{}
	for _, c := range r.All.System.Codes {
		codes = append(codes, c.Code)
		names[c.Code] = c.Name
	}
	if len(codes) == 0 {
		return section{}, false
	}
	s := section{ID: "system", Title: "Harness and infrastructure failures", Intro: []string{
		"Failures of the endpoint, harness or tools rather than of the agent. They are not MAST modes and count in none of the figures above; " +
			"the traces that show them do, with whatever MAST modes they have.",
	}}
	t := &Table{Header: []string{"code"}, NumericRight: true}
	for _, g := range groups {
		t.Header = append(t.Header, g.Name)
	}
	for _, code := range codes {
		row := []string{strings.TrimSpace(code + " " + names[code])}
		links := []string{""}
		for _, g := range groups {
			p := analyze.Proportion{N: g.Traces}
			for _, c := range g.System.Codes {
				if c.Code == code {
					p = c.Traces
				}
			}
			row = append(row, countShare(p))
			links = append(links, l.to(g, "", code))
		}
		t.add(row, links...)
	}
	all := r.All.System
	s.Blocks = []block{{Table: t, Notes: []string{fmt.Sprintf("Traces with any: %d of %d, of which %d failed.", all.Traces, r.All.Traces, all.Failed)}}}
	return s, true
}

// customSection shows the codes of the user's own rules: in which groups,
// and how much more often in failed traces than in successful ones.
func customSection(r *analyze.Report, groups []*analyze.Group, l linker) (section, bool) {
	if len(r.All.Custom) == 0 {
		return section{}, false
	}
	s := section{ID: "custom", Title: "Your own codes", Intro: []string{
		"Codes of the rule file's own rules, neither MAST modes nor harness failures: they count in none of the figures above.",
	}}
	t := &Table{Header: []string{"code"}, NumericRight: true}
	for _, g := range groups {
		t.Header = append(t.Header, g.Name)
	}
	t.Header = append(t.Header, "in failed", "in successful")
	for _, c := range r.All.Custom {
		row := []string{strings.TrimSpace(c.Code + " " + c.Name)}
		links := []string{""}
		for _, g := range groups {
			p := analyze.Proportion{N: g.Traces}
			for _, gc := range g.Custom {
				if gc.Code == c.Code {
					p = gc.Traces
				}
			}
			row = append(row, countShare(p))
			links = append(links, l.to(g, "", c.Code))
		}
		row = append(row, percent(c.Failed), percent(c.Succeeded))
		links = append(links, l.to(r.All, "failure", c.Code), l.to(r.All, "success", c.Code))
		t.add(row, links...)
	}
	s.Blocks = []block{{Table: t}}
	return s, true
}

func compareSection(r *analyze.Report) section {
	c := r.Compare
	s := section{ID: "compare", Title: fmt.Sprintf("%s against %s", c.A, c.B), Intro: []string{
		fmt.Sprintf("Each figure in %s and in %s, with Fisher's exact test for shares and Welch's t test for the density; "+
			"\"higher\" names the group that is significantly higher (q < %g).", c.A, c.B, r.Rule.Alpha),
	}}
	t := &Table{Header: []string{"measure", c.A, c.B, "difference", "odds ratio", "p", "q", "higher"}, NumericRight: true}
	higher := func(h string) string {
		switch h {
		case "a":
			return c.A
		case "b":
			return c.B
		}
		return "neither"
	}
	t.Rows = append(t.Rows, []string{"success rate", shareWithInterval(c.Success.A), shareWithInterval(c.Success.B), pointsText(c.Success.Difference),
		oddsRatioText(c.Success.OddsRatio), pText(c.Success.Test), qText(c.Success.Test), higher(c.Success.Higher)})
	diff := "-"
	if c.Density.Difference != nil {
		diff = fmt.Sprintf("%+.1f", *c.Density.Difference)
	}
	t.Rows = append(t.Rows, []string{"modes per failed trace", meanText(c.Density.A, 1, false), meanText(c.Density.B, 1, false), diff, "",
		pText(c.Density.Test), qText(c.Density.Test), higher(c.Density.Higher)})
	for _, m := range c.Modes {
		t.Rows = append(t.Rows, []string{m.Mode + " " + m.Name, shareWithInterval(m.A), shareWithInterval(m.B), pointsText(m.Difference),
			oddsRatioText(m.OddsRatio), pText(m.Test), qText(m.Test), higher(m.Higher)})
	}
	s.Blocks = []block{{Table: t, Notes: []string{"Mode shares are over all traces of each group; the odds ratio is the odds in " + c.A + " over the odds in " + c.B + "."}}}
	return s
}

// modesSeen lists the MAST modes present in any group, in taxonomy order
// (the groups list them in that order, and "all" has every one).
func modesSeen(groups []*analyze.Group) []string {
	var codes []string
	for _, m := range groups[len(groups)-1].Modes {
		codes = append(codes, m.Mode)
	}
	return codes
}

func modeNameOf(groups []*analyze.Group, code string) string {
	return groups[len(groups)-1].Mode(code).Name
}

func groupHeading(g *analyze.Group) string {
	return fmt.Sprintf("%s: %s, %d failed, %d succeeded", g.Name, text.Plural(g.Traces, "trace", "traces"), g.Failed, g.Succeeded)
}

// classNames words each class of the rule.
var classNames = map[string]string{
	analyze.Fatal:           "fatal",
	analyze.NonFatal:        "non-fatal",
	analyze.Inconclusive:    "inconclusive",
	analyze.TooFewSucceeded: "too few successes",
	analyze.TooFewFailed:    "too few failures",
	analyze.TooFewEither:    "too few successes and failures",
}

func classText(m *analyze.ModeStats) string {
	text := classNames[m.Class]
	if m.NeverInSuccesses {
		text += ", never in successes"
	}
	return text
}

// percent is a share as a whole percentage, "-" when undefined.
func percent(p analyze.Proportion) string {
	share, ok := p.Share()
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*share)
}

// countShare is "k/n s%", "·" for none, so small groups read as small.
func countShare(p analyze.Proportion) string {
	if p.K == 0 {
		return "·"
	}
	return fraction(p)
}

// fraction is "k/n s%".
func fraction(p analyze.Proportion) string { return fmt.Sprintf("%d/%d %s", p.K, p.N, percent(p)) }

// shareWithInterval is "k/n s% [lo–hi]".
func shareWithInterval(p analyze.Proportion) string {
	iv, ok := p.Interval()
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%s [%.0f–%.0f]", fraction(p), 100*iv.Lo, 100*iv.Hi)
}

func metricText(m *analyze.OutcomeMetric) string {
	if m == nil {
		return "-"
	}
	return meanText(m.Mean, 1, m.Min >= 0 && m.Max <= 1)
}

// meanText is "mean [lo–hi]" with the given decimals, as a percentage when
// asked (for a metric between 0 and 1).
func meanText(m analyze.Mean, decimals int, asPercent bool) string {
	if m.Value == nil {
		return "-"
	}
	scale, unit := 1.0, ""
	if asPercent {
		scale, unit = 100, "%"
	}
	f := func(x float64) string { return fmt.Sprintf("%.*f", decimals, x*scale) }
	if m.Lo == nil {
		return fmt.Sprintf("%s%s (n=%d)", f(*m.Value), unit, m.N)
	}
	return fmt.Sprintf("%s%s [%s–%s]", f(*m.Value), unit, f(*m.Lo), f(*m.Hi))
}

// distributionText lists "modes:traces" for every count of modes that
// some failed trace has.
func distributionText(counts []int) string {
	var parts []string
	for k, n := range counts {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d:%d", k, n))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func pointsText(d *float64) string {
	if d == nil {
		return "-"
	}
	return fmt.Sprintf("%+.0f pts", 100**d)
}

// liftText words a mode's lift; a mode found in failed traces and in no
// successful one has an infinite lift.
func liftText(m *analyze.ModeStats) string {
	switch {
	case m.NeverInSuccesses:
		return "∞"
	case m.Lift == nil:
		return "-"
	}
	return fmt.Sprintf("%+.0f%%", 100**m.Lift)
}

func oddsRatioText(or *analyze.OddsRatio) string {
	if or == nil {
		return "-"
	}
	mark := ""
	if or.Corrected {
		mark = "*"
	}
	return fmt.Sprintf("%s%s [%s–%s]", sig2(or.Value), mark, sig2(or.Lo), sig2(or.Hi))
}

// sig2 prints a positive ratio to two significant digits (whole numbers
// from 10 up).
func sig2(x float64) string {
	if x >= 10 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.*f", 1-int(math.Floor(math.Log10(x))), x)
}

func pText(s *analyze.Significance) string {
	if s == nil {
		return "-"
	}
	return probability(s.P)
}

func qText(s *analyze.Significance) string {
	if s == nil {
		return "-"
	}
	return probability(s.Q)
}

func probability(p float64) string {
	if p < 0.0001 {
		return "<0.0001"
	}
	if p >= 0.1 {
		return fmt.Sprintf("%.2f", p)
	}
	// Two significant digits: 0.032, 0.0047.
	digits := 1 - int(math.Floor(math.Log10(p)))
	return fmt.Sprintf("%.*f", digits, p)
}
