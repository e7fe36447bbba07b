package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/trace"
	"github.com/faultline/faultline/trace/toolcall"
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
	Args     *textView // a call's arguments, laid out by formatArgs
	ArgsRest []argField
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
	Shell    bool   // a command line, shown after a prompt
}

// run is a piece of text, marked when it is quoted evidence (Mark names
// the findings that quote it).
type run struct {
	Text string
	Mark string
}

// findingChip is a finding shown at a step it cites.
type findingChip struct {
	Code        string // "" for a label whose mode is unknown
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
		Error: stepFailed(s),
	}
	if s.Kind == trace.KindToolCall {
		v.Title = s.Tool // the arguments follow in full
	}
	if !s.Time.IsZero() {
		v.Time = s.Time.UTC().Format("15:04:05")
	}
	for _, f := range findings {
		v.Findings = append(v.Findings, findingChip{Code: f.Mode, Title: report.FindingTitle(f), Source: report.SourceName(f), Explanation: f.Explanation})
	}
	whole := fmt.Sprintf("%s/steps/%d", traceURL(id), s.Index)
	if s.Kind == trace.KindToolCall && s.Args != "" {
		args := formatArgs(s.Tool, s.Args)
		v.Args = newTextView(whole+"?field=args", args.Text, findings, limit)
		v.Args.Shell, v.ArgsRest = args.Shell, args.Rest
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

// callArgs is a call's arguments laid out to be read: the command line of
// a call that runs one (with the call's other, short fields beside it), JSON
// indented, anything else as written.
type callArgs struct {
	Text  string
	Shell bool // Text is a shell command line
	Rest  []argField
}

// argField is one of a command's other arguments (its working directory,
// its timeout).
type argField struct{ Name, Value string }

// restLimit is the longest field shown beside a command; a call with a
// longer one (an editor's file text) is shown whole, as JSON.
const restLimit = 200

// shellTools are words in the names of tools that run command lines: a
// "command" field of another tool (an editor's "view") is no command line.
var shellTools = []string{"shell", "bash", "exec", "terminal", "command", "cmd"}

// formatArgs lays out a call's arguments. The command is read by
// toolcall.CommandOf, the one reading of what a call runs, so that the view
// shows what the detectors judged; it is shown as a command line (after a
// prompt) when it comes from a "command" or "cmd" field of a shell's call,
// or is an argv list.
func formatArgs(tool, args string) callArgs {
	trimmed := strings.TrimSpace(args)
	var top map[string]json.RawMessage
	if json.Unmarshal([]byte(trimmed), &top) == nil && top != nil {
		if out, ok := commandArgs(tool, args, top); ok {
			return out
		}
	}
	var b bytes.Buffer
	if (strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[")) && json.Indent(&b, []byte(trimmed), "", "  ") == nil {
		return callArgs{Text: b.String()}
	}
	return callArgs{Text: args}
}

// commandArgs lays out a call that runs a command or script, when its
// other fields are short enough to go beside it.
func commandArgs(tool, args string, top map[string]json.RawMessage) (callArgs, bool) {
	cmd := toolcall.CommandOf(args, top)
	if cmd == args {
		return callArgs{}, false
	}
	out := callArgs{Text: cmd}
	found := false
	for _, k := range slices.Sorted(maps.Keys(top)) {
		// The field the command came from is the one that alone gives it.
		if !found && toolcall.CommandOf("", map[string]json.RawMessage{k: top[k]}) == cmd {
			found = true
			argv := strings.HasPrefix(strings.TrimSpace(string(top[k])), "[")
			named := slices.ContainsFunc(shellTools, func(w string) bool { return strings.Contains(strings.ToLower(tool), w) })
			out.Shell = (k == "command" || k == "cmd") && (argv || named)
			continue
		}
		var str string
		if json.Unmarshal(top[k], &str) != nil {
			str = string(top[k])
		}
		if len(str) > restLimit || strings.Contains(str, "\n") {
			return callArgs{}, false
		}
		out.Rest = append(out.Rest, argField{k, str})
	}
	return out, true
}

// waterfall lays a page of steps out on a time axis, as trace viewers draw
// spans: one row per step, or, for a trace from OpenTelemetry, one row per
// span, nested under the span that holds it.
type waterfall struct {
	From, To int  // the steps it covers
	Spans    bool // rows are spans
	Tree     bool // nested by the trace's span tree, not guessed from its steps
	Took     string
	Tokens   int
	Rows     []waterfallRow
	Folded   bool // too many rows to show before the steps unasked
}

// waterfallRow is a step or a span: its steps, when it ran and what it
// used. X and W place its bar on the axis, in percent.
type waterfallRow struct {
	Depth  int
	Label  string
	Agent  string
	Steps  []int
	Took   string
	Tokens int
	Error  bool
	// Found names the modes (or, for a label of no known mode, the label)
	// that present findings cite at the row's steps.
	Found  []string
	X, W   float64
	start  time.Time
	end    time.Time
	parent *waterfallRow
}

// foldRows is the most rows a waterfall shows open.
const foldRows = 40

// maxIndent is the deepest a span is indented.
const maxIndent = 6

// minBar is the narrowest bar, in percent, so that an instant still shows.
const minBar = 0.4

// stepTimes gives each timed step of the page the time it took: a result
// from its call, the agent's output from the step before it (the model was
// at work since), anything else the instant it was recorded. Untimed steps
// get zero times.
func stepTimes(page []trace.Step, from int) (start, end []time.Time) {
	start, end = make([]time.Time, len(page)), make([]time.Time, len(page))
	var last time.Time // the latest time recorded so far
	for i := range page {
		s := &page[i]
		if s.Time.IsZero() {
			continue
		}
		start[i], end[i] = s.Time, s.Time
		switch {
		case s.Kind == trace.KindToolResult && s.Pair != nil && *s.Pair >= from && *s.Pair < i+from && !page[*s.Pair-from].Time.IsZero():
			start[i] = page[*s.Pair-from].Time
		case s.Kind == trace.KindToolResult || produced(s):
			if !last.IsZero() && last.Before(s.Time) {
				start[i] = last
			}
		}
		if s.Time.After(last) {
			last = s.Time
		}
	}
	return start, end
}

// newWaterfall lays out the page of steps that starts at from, with the
// findings at its steps; nil when fewer than two of its steps are timed, or
// all at one instant. tree is the trace's span tree and rootSpan its root
// span (OpenTelemetry's, from the trace's meta), nil and "" when it has
// none.
func newWaterfall(page []trace.Step, from int, tree []trace.Span, rootSpan string, at map[int][]trace.Finding) *waterfall {
	start, end := stepTimes(page, from)
	var t0, t1 time.Time
	timed := 0
	for i := range page {
		if start[i].IsZero() {
			continue
		}
		timed++
		if t0.IsZero() || start[i].Before(t0) {
			t0 = start[i]
		}
		if end[i].After(t1) {
			t1 = end[i]
		}
	}
	if timed < 2 || !t1.After(t0) {
		return nil
	}
	w := &waterfall{From: from, To: from + len(page), Spans: slices.ContainsFunc(page, func(s trace.Step) bool { return s.SpanID != "" })}
	switch {
	case w.Spans && tree != nil:
		w.Rows, w.Tree = treeRows(page, start, end, tree, t0, t1), true
	case w.Spans:
		w.Rows = spanRows(page, start, end, rootSpan)
	default:
		for i := range page {
			s := &page[i]
			if start[i].IsZero() {
				continue
			}
			label := report.KindLabel(s)
			switch {
			case s.Tool != "":
				label += " " + s.Tool
			case s.Text != "":
				label += " " + trace.Clip(trace.NormalizeSpace(s.Text), 80)
			}
			w.Rows = append(w.Rows, waterfallRow{Label: label, Agent: s.Agent, Steps: []int{s.Index}, Tokens: s.Tokens, Error: stepFailed(s), start: start[i], end: end[i]})
		}
	}
	total := t1.Sub(t0)
	w.Took, w.Folded = duration(total), len(w.Rows) > foldRows
	for i := range w.Rows {
		r := &w.Rows[i]
		w.Tokens += r.Tokens
		for _, n := range r.Steps {
			for _, f := range at[n] {
				found := f.Mode
				if found == "" {
					found = f.RawLabel
				}
				if !slices.Contains(r.Found, found) {
					r.Found = append(r.Found, found)
				}
			}
		}
		if r.start.IsZero() {
			continue // a span none of whose steps is timed
		}
		r.Took = duration(r.end.Sub(r.start))
		// A span of the tree may run before or after the page's steps: its
		// bar is cut at the page's edges.
		from, to := r.start, r.end
		if from.Before(t0) {
			from = t0
		}
		if to.After(t1) {
			to = t1
		}
		r.X = 100 * float64(from.Sub(t0)) / float64(total)
		r.W = max(minBar, 100*float64(to.Sub(from))/float64(total))
		r.X = min(r.X, 100-r.W)
	}
	return w
}

// treeRows lays out the spans of the trace's tree that the page's steps
// came from, with their ancestors and, under those, the spans that wrote
// no step while the page's steps ran (an HTTP call under a tool): nested as
// the tree says, each at its own times, with its steps' tokens. A step of
// a span the tree lacks (a late span merged into a stored trace) stands
// alone after them.
func treeRows(page []trace.Step, start, end []time.Time, tree []trace.Span, t0, t1 time.Time) []waterfallRow {
	index := make(map[string]int, len(tree))
	for i, sp := range tree {
		index[sp.ID] = i
	}
	rows := make([]*waterfallRow, len(tree))
	row := func(i int) *waterfallRow {
		if rows[i] == nil {
			rows[i] = &waterfallRow{Label: tree[i].Name, Error: tree[i].Failed, start: tree[i].Start, end: tree[i].End}
		}
		return rows[i]
	}
	var loose []int
	for i := range page {
		s := &page[i]
		n, ok := index[s.SpanID]
		if !ok {
			loose = append(loose, i)
			continue
		}
		r := row(n)
		r.Steps = append(r.Steps, s.Index)
		r.Tokens += s.Tokens
		r.Error = r.Error || stepFailed(s)
		if r.Agent == "" {
			r.Agent = s.Agent
		}
	}
	// Shown: the spans with steps here and their ancestors (a cycle, which
	// the tree may hold, is walked once), and below them the spans of no
	// step here that ran within the page's time.
	shown := make([]bool, len(tree))
	for i := range rows {
		for n, hops := i, 0; rows[i] != nil && n >= 0 && !shown[n] && hops <= len(tree); hops++ {
			shown[n] = true
			p, ok := index[tree[n].Parent]
			if !ok {
				break
			}
			n = p
		}
	}
	children := map[int][]int{}
	var roots []int
	for i, sp := range tree {
		if p, ok := index[sp.Parent]; ok && sp.Parent != "" && p != i {
			children[p] = append(children[p], i)
		} else {
			roots = append(roots, i)
		}
	}
	byStart := func(ids []int) {
		slices.SortStableFunc(ids, func(a, b int) int { return tree[a].Start.Compare(tree[b].Start) })
	}
	byStart(roots)
	var out []waterfallRow
	visited := make([]bool, len(tree))
	var walk func(i, depth int, parentAgent string)
	walk = func(i, depth int, parentAgent string) {
		if visited[i] {
			return
		}
		visited[i] = true
		sp := tree[i]
		if !shown[i] && (rows[i] != nil || sp.End.Before(t0) || sp.Start.After(t1)) {
			return
		}
		r := *row(i)
		agent := r.Agent
		if agent == parentAgent {
			r.Agent = "" // named once, on the span that brings the name
		} else if agent == "" {
			agent = parentAgent
		}
		r.Depth = min(depth, maxIndent)
		out = append(out, r)
		kids := children[i]
		byStart(kids)
		for _, k := range kids {
			walk(k, depth+1, agent)
		}
	}
	for _, i := range roots {
		walk(i, 0, "")
	}
	for i := range tree { // in a cycle, reached from no root
		if shown[i] && !visited[i] {
			walk(i, 0, "")
		}
	}
	for _, i := range loose {
		s := &page[i]
		out = append(out, waterfallRow{Label: report.KindLabel(s), Agent: s.Agent, Steps: []int{s.Index}, Tokens: s.Tokens,
			Error: stepFailed(s), start: start[i], end: end[i]})
	}
	return out
}

// spanRows groups the page's steps by the span they came from, for a
// trace that keeps no span tree (one stored before traces kept it). The
// store keeps each step's span but not the span's parent; the steps of a span
// were written depth first, what it was given when it started and what it
// produced when it ended around its children's, so a span whose steps
// enclose another's holds it. A span that wrote steps only on one side of
// its children is shown beside them rather than above, except the trace's
// root span, which holds every other. Each span's time runs from its first
// step's start to its last step's end, and covers its children's.
func spanRows(page []trace.Step, start, end []time.Time, rootSpan string) []waterfallRow {
	var rows []*waterfallRow
	byID := map[string]*waterfallRow{}
	last := map[*waterfallRow]int{}
	results := map[*waterfallRow]string{} // the tool a span's result came from
	agentWork := map[*waterfallRow]bool{}
	for i := range page {
		s := &page[i]
		id := s.SpanID
		if id == "" {
			id = fmt.Sprintf("step %d", s.Index) // a step of no span stands alone
		}
		r := byID[id]
		if r == nil {
			r = &waterfallRow{Agent: s.Agent}
			byID[id] = r
			rows = append(rows, r)
			if id == rootSpan {
				r.Label = "agent"
			}
		}
		last[r] = i
		r.Steps = append(r.Steps, s.Index)
		r.Tokens += s.Tokens
		r.Error = r.Error || stepFailed(s)
		if s.Kind == trace.KindToolResult {
			results[r] = s.Tool
		}
		agentWork[r] = agentWork[r] || produced(s)
		if !start[i].IsZero() && (r.start.IsZero() || start[i].Before(r.start)) {
			r.start = start[i]
		}
		if end[i].After(r.end) {
			r.end = end[i]
		}
	}
	var stack []*waterfallRow
	for _, r := range rows {
		first := r.Steps[0] - page[0].Index
		for len(stack) > 0 && last[stack[len(stack)-1]] < first {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			r.parent = stack[len(stack)-1]
		} else if root := rows[0]; r != root && root.Label == "agent" {
			r.parent = root
		}
		stack = append(stack, r)
		if r.parent != nil {
			// Deeper spans are indented no further: the names need the room.
			r.Depth = min(r.parent.Depth+1, maxIndent)
		}
		switch {
		case r.Label != "":
		case results[r] != "":
			r.Label = "tool " + results[r]
		case agentWork[r]:
			r.Label = "LLM"
		case r.Agent != "" && (r.parent == nil || r.parent.Agent != r.Agent):
			// Steps take the name of the agent whose span holds them: a span
			// that brings a new name, with no output of its own, is that
			// agent's, given its input.
			r.Label = "agent"
		default:
			r.Label = report.KindLabel(&page[first])
		}
	}
	// Children come after their parents: backwards, each widens its parent.
	for i := len(rows) - 1; i >= 0; i-- {
		r := rows[i]
		if p := r.parent; p != nil && !r.start.IsZero() {
			if p.start.IsZero() || r.start.Before(p.start) {
				p.start = r.start
			}
			if r.end.After(p.end) {
				p.end = r.end
			}
		}
	}
	out := make([]waterfallRow, len(rows))
	for i, r := range rows {
		out[i] = *r
		out[i].parent = nil
		if r.parent != nil && r.parent.Agent == r.Agent {
			out[i].Agent = "" // named once, on the span that brings the name
		}
	}
	return out
}

// produced says whether the agent wrote a step, as a model's output takes
// time to write: what trace.ByAgent counts, but for a message in the
// user's seat, which is most often an agent's input (OpenTelemetry's agent
// spans give their task that way, under the agent's name).
func produced(s *trace.Step) bool {
	return trace.ByAgent(s) && s.Role != trace.RoleUser
}

// stepFailed says whether a step reports a failure, as the timeline marks
// it.
func stepFailed(s *trace.Step) bool {
	return s.IsError || s.Kind == trace.KindError || (s.ExitCode != nil && *s.ExitCode != 0)
}

// duration words a step's or span's time: 40 ms, 1.7 s, 2m5s.
func duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}
