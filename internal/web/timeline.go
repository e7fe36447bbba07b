package web

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/trace"
)

// A trace's steps are shown a page at a time, so that a trace of 10,000
// steps opens as fast as one of 10; htmx fetches the pages before and after
// as they are wanted.
const stepsPerPage = 200

// Long texts are folded (a few lines show, the rest on a click) and cut:
// a step sends at most bodyLimit bytes of its text until asked for all.
const (
	foldLines   = 12
	foldBytes   = 1500
	previewLine = 3
	bodyLimit   = 64 << 10
	// quoteLead is how much text is kept before a quote when the cut has to
	// move to show it.
	quoteLead = 2 << 10
)

// timeline is one page of steps.
type timeline struct {
	TraceID string
	Items   []stepItem
	From    int // first step of the page
	To      int // one past its last
	Total   int
	// Prev and Next start the pages before and after, -1 when there is
	// none; Dir says which of them this fragment offers to load: both for a
	// whole page, one when a fragment is added before or after others.
	Prev, Next int
	Dir        string
	Labelling  bool // steps can be cited as evidence
}

// StepHref links to step n: its anchor when it is on this page, else the
// page that holds it.
func (tl timeline) StepHref(n int) string {
	if n >= tl.From && n < tl.To {
		return "#step-" + strconv.Itoa(n)
	}
	return stepURL(tl.TraceID, n)
}

// stepURL opens the page of a trace that holds step n, scrolled to it.
func stepURL(id string, n int) string {
	return traceURL(id) + "?step=" + strconv.Itoa(n)
}

// stepItem is a step as the timeline shows it: a tool call beside its
// result, or any other step alone. A result whose call is on another page
// stands alone and says where its call is.
type stepItem struct {
	Step   stepView
	Result *stepView
	CallAt int // for a result shown alone: its call's index, else -1
}

// stepView is one step, ready to show.
type stepView struct {
	Trace    string
	Index    int
	Anchor   bool // carries the step's id (a result shown beside its call on another page does not)
	Kind     string
	Label    string
	Title    string
	Who      string
	Time     string
	Tokens   int
	Error    bool
	ExitCode *int
	Args     *textView // a call's arguments
	Text     *textView
	Findings []findingChip
}

// textView is a step's text cut into runs, the quoted evidence marked.
type textView struct {
	URL      string // where the whole of it is
	Runs     []run
	Lines    int
	Bytes    int
	Folded   bool
	Open     bool   // folded, but open to show a quote
	Preview  string // the first lines, shown while folded
	Before   int    // bytes not sent before the part sent
	After    int    // and after it
	Complete bool   // every byte sent
}

// run is a piece of text, marked when it is quoted evidence (Mark names
// the findings that quote it).
type run struct {
	Text string
	Mark string
}

// findingChip is a finding shown at a step it cites.
type findingChip struct {
	Title       string
	Source      string
	Explanation string
}

// stepFindings indexes the findings a trace view shows by the steps they
// cite: those report.PresentFindings keeps, as the terminal view does.
func stepFindings(findings []trace.Finding) map[int][]trace.Finding {
	at := map[int][]trace.Finding{}
	for _, f := range report.PresentFindings(findings) {
		for _, i := range f.Steps {
			at[i] = append(at[i], f)
		}
	}
	return at
}

// buildTimeline lays out the page of steps that starts at from; outside
// holds the steps of other pages paired with calls or results on this one.
func buildTimeline(t *trace.Trace, page []trace.Step, outside map[int]*trace.Step, from, total int) timeline {
	tl := timeline{TraceID: t.ID, From: from, To: from + len(page), Total: total, Prev: -1, Next: -1}
	if from > 0 {
		tl.Prev = max(0, from-stepsPerPage)
	}
	if tl.To < total {
		tl.Next = tl.To
	}
	at := stepFindings(t.Findings)
	onPage := func(i int) bool { return i >= tl.From && i < tl.To }
	for i := range page {
		s := &page[i]
		item := stepItem{CallAt: -1}
		switch {
		case s.Kind == trace.KindToolResult && s.Pair != nil && onPage(*s.Pair):
			continue // shown beside its call
		case s.Kind == trace.KindToolResult && s.Pair != nil:
			item.CallAt = *s.Pair
		case s.Kind == trace.KindToolCall && s.Pair != nil:
			var res *trace.Step
			if onPage(*s.Pair) {
				res = &page[*s.Pair-from]
			} else {
				res = outside[*s.Pair]
			}
			if res != nil {
				v := newStepView(t.ID, res, at[res.Index], bodyLimit)
				v.Anchor = onPage(res.Index)
				item.Result = &v
			}
		}
		item.Step = newStepView(t.ID, s, at[s.Index], bodyLimit)
		item.Step.Anchor = true
		tl.Items = append(tl.Items, item)
	}
	return tl
}

// pairsOutside lists the steps paired with the page's steps that are not
// on the page: the results of its last calls.
func pairsOutside(page []trace.Step, from int) []int {
	var out []int
	for _, s := range page {
		if s.Pair != nil && (*s.Pair < from || *s.Pair >= from+len(page)) && s.Kind == trace.KindToolCall {
			out = append(out, *s.Pair)
		}
	}
	return out
}

func newStepView(id string, s *trace.Step, findings []trace.Finding, limit int) stepView {
	who := s.Role
	if s.Agent != "" {
		who = s.Agent
	}
	v := stepView{
		Trace: id, Index: s.Index, Kind: string(s.Kind), Label: report.KindLabel(s), Title: report.StepTitle(s), Who: who,
		Tokens: s.Tokens, ExitCode: s.ExitCode,
		Error: s.IsError || s.Kind == trace.KindError || (s.ExitCode != nil && *s.ExitCode != 0),
	}
	if s.Kind == trace.KindToolCall {
		v.Title = s.Tool // the arguments follow in full
	}
	if !s.Time.IsZero() {
		v.Time = s.Time.UTC().Format("15:04:05")
	}
	for _, f := range findings {
		v.Findings = append(v.Findings, findingChip{Title: report.FindingTitle(f), Source: report.SourceName(f), Explanation: f.Explanation})
	}
	whole := fmt.Sprintf("%s/steps/%d", traceURL(id), s.Index)
	if s.Kind == trace.KindToolCall && s.Args != "" {
		v.Args = newTextView(whole+"?field=args", s.Args, findings, limit)
	}
	if s.Text != "" {
		v.Text = newTextView(whole, s.Text, findings, limit)
	}
	return v
}

// newTextView cuts text into runs with the findings' quotes marked, sends
// at most limit bytes of it (moving the cut to show the first quote), and
// folds it when long.
func newTextView(whole, text string, findings []trace.Finding, limit int) *textView {
	v := &textView{URL: whole, Lines: strings.Count(text, "\n") + 1, Bytes: len(text)}
	marks := quoteMarks(text, findings)
	from, to := 0, len(text)
	if len(text) > limit {
		if len(marks) > 0 && marks[0].from > limit-quoteLead {
			from = runeStart(text, marks[0].from-quoteLead)
		}
		to = runeStart(text, min(len(text), from+limit))
	}
	v.Before, v.After, v.Complete = from, len(text)-to, to-from == len(text)
	v.Runs = cut(text, from, to, marks)
	v.Folded = v.Lines > foldLines || len(text) > foldBytes
	if v.Folded {
		v.Open = len(marks) > 0
		lines := strings.SplitN(text[from:to], "\n", previewLine+1)
		v.Preview = trace.Clip(strings.Join(lines[:min(len(lines), previewLine)], "\n"), 300)
	}
	return v
}

// mark is a quoted span of a text and the findings that quote it.
type mark struct {
	from, to int
	by       []string
}

// quoteMarks finds each finding's quote in text, whitespace-insensitively
// as trace.Finding.CheckEvidence looks for it, and merges overlapping
// spans.
func quoteMarks(text string, findings []trace.Finding) []mark {
	var marks []mark
	for _, f := range findings {
		re := quotePattern(f.Quote)
		if re == nil {
			continue
		}
		if loc := re.FindStringIndex(text); loc != nil {
			marks = append(marks, mark{loc[0], loc[1], []string{report.FindingTitle(f) + " · " + report.SourceName(f)}})
		}
	}
	sort.Slice(marks, func(i, j int) bool { return marks[i].from < marks[j].from })
	var merged []mark
	for _, m := range marks {
		if n := len(merged); n > 0 && m.from <= merged[n-1].to {
			last := &merged[n-1]
			last.to = max(last.to, m.to)
			for _, b := range m.by {
				if !slices.Contains(last.by, b) {
					last.by = append(last.by, b)
				}
			}
			continue
		}
		merged = append(merged, m)
	}
	return merged
}

// quotePattern matches a quote with any whitespace between its words; nil
// for an empty quote, or one that is no pattern (bytes that are not UTF-8,
// which a span's raw attribute can carry): it is then shown unmarked.
func quotePattern(quote string) *regexp.Regexp {
	words := strings.Fields(quote)
	if len(words) == 0 {
		return nil
	}
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	re, err := regexp.Compile(strings.Join(words, `[\s\p{Z}]+`))
	if err != nil {
		return nil
	}
	return re
}

// cut splits text[from:to] into runs at the marks.
func cut(text string, from, to int, marks []mark) []run {
	var runs []run
	pos := from
	for _, m := range marks {
		start, end := max(m.from, from), min(m.to, to)
		if start >= end {
			continue
		}
		if start > pos {
			runs = append(runs, run{Text: text[pos:start]})
		}
		runs = append(runs, run{Text: text[start:end], Mark: strings.Join(m.by, "; ")})
		pos = end
	}
	if pos < to {
		runs = append(runs, run{Text: text[pos:to]})
	}
	return runs
}

// runeStart moves i back to the start of the rune it is in.
func runeStart(s string, i int) int {
	i = max(0, min(i, len(s)))
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}
