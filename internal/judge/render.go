package judge

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// RenderOptions bounds how much of each step the judge is shown, in
// characters (runes). Texts longer than their limit keep their beginning and
// end, with a marker saying how much was cut between them.
type RenderOptions struct {
	// OutputChars bounds tool results: they dominate long traces and their
	// middle (the bulk of a listing or a log) rarely decides a mode.
	OutputChars int `yaml:"output_chars"`
	// TextChars bounds what the agent itself wrote: messages, reasoning,
	// tool-call arguments, final answers, and the answer file.
	TextChars int `yaml:"text_chars"`
	// TaskChars bounds the task setup (the steps before the agent's first
	// move, or the task when no step holds it): the constraints that FM-1.1
	// and FM-1.2 are judged against live there.
	TaskChars int `yaml:"task_chars"`
}

// DefaultRender are the limits used unless the configuration sets others.
var DefaultRender = RenderOptions{OutputChars: 2000, TextChars: 4000, TaskChars: 32000}

// rendered is a trace prepared for prompting: a header and one block of text
// per step, each block already bounded by the render limits.
type rendered struct {
	t      *trace.Trace
	header string
	// blocks[i] is step i as shown in full; dupKeys[i] is the whitespace-
	// compacted text that identifies a repeated output ("" for steps too
	// short to be worth replacing).
	blocks  []string
	heads   []string
	dupKeys []string
	// setup is the number of leading steps that make up the task setup
	// (instructions and the first user message): they are repeated at the
	// start of every window of a long trace.
	setup int
	hints []trace.Finding
}

// minDupRunes is the shortest text replaced by a reference when repeated:
// below it the reference saves nothing.
const minDupRunes = 64

// render prepares t. Findings of hintSource are offered as hints.
func render(t *trace.Trace, opt RenderOptions, hintSource string) *rendered {
	r := &rendered{t: t, blocks: make([]string, len(t.Steps)), heads: make([]string, len(t.Steps)), dupKeys: make([]string, len(t.Steps))}
	r.setup = taskSetup(t)
	for i := range t.Steps {
		s := &t.Steps[i]
		body, limit := stepBody(s), opt.TextChars
		switch {
		case i < r.setup:
			limit = opt.TaskChars
		case s.Kind == trace.KindToolResult:
			limit = opt.OutputChars
		}
		body = compact(body)
		if utf8.RuneCountInString(body) >= minDupRunes {
			r.dupKeys[i] = string(s.Kind) + "\x00" + body
		}
		r.heads[i] = stepHead(s)
		r.blocks[i] = r.heads[i] + "\n" + cut(body, limit) + "\n"
	}
	for _, f := range t.Findings {
		if f.Source == hintSource && f.Verdict == trace.Present {
			r.hints = append(r.hints, f)
		}
	}
	r.header = traceHeader(t, r.setup, opt)
	return r
}

// taskSetup counts the leading steps that set the task up: system and
// harness messages and the user's first messages, up to the agent's first
// move.
func taskSetup(t *trace.Trace) int {
	n := 0
	for _, s := range t.Steps {
		if (s.Kind != trace.KindMessage && s.Kind != trace.KindSystem) || s.Role == trace.RoleAssistant {
			break
		}
		n++
	}
	return n
}

// traceHeader describes the trace and shows what the judge needs that no
// step holds: the task when no setup step states it, and the answer file.
func traceHeader(t *trace.Trace, setup int, opt RenderOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "TRACE: %d steps", len(t.Steps))
	if len(t.Steps) > 0 {
		fmt.Fprintf(&b, " (S0-S%d)", len(t.Steps)-1)
	}
	if t.Format != "" {
		fmt.Fprintf(&b, "; format %s", t.Format)
	}
	if t.System != "" {
		fmt.Fprintf(&b, "; system %s", t.System)
	}
	b.WriteString("\n")
	if task := compact(t.Task); task != "" && !statedIn(t.Steps[:setup], task) {
		fmt.Fprintf(&b, "\nTASK (given to the agent; not a step, do not quote it):\n%s\n", cut(task, opt.TaskChars))
	}
	if t.Diagnosis != nil && strings.TrimSpace(t.Diagnosis.Body) != "" {
		fmt.Fprintf(&b, "\nANSWER FILE (the run's declared answer as found after the run; not a step, do not quote it):\n%s\n", cut(compact(t.Diagnosis.Body), opt.TextChars))
	}
	return b.String()
}

// statedIn reports whether text occurs, whitespace-normalised, in one of the steps.
func statedIn(steps []trace.Step, text string) bool {
	want := trace.NormalizeSpace(text)
	for i := range steps {
		if strings.Contains(trace.NormalizeSpace(steps[i].Text), want) {
			return true
		}
	}
	return false
}

// stepHead is a step's header line, e.g. [S12 tool_result shell exit=1 for S11].
func stepHead(s *trace.Step) string {
	parts := []string{"S" + strconv.Itoa(s.Index), string(s.Kind)}
	who := s.Agent
	if who == "" {
		who = s.Role
	}
	if who != "" && who != trace.RoleTool {
		parts = append(parts, who)
	}
	if s.Tool != "" {
		parts = append(parts, s.Tool)
	}
	// The format's event type tells harness messages apart (instructions,
	// retry nudges); on tool steps it only repeats the output's encoding.
	if s.Type != "" && (s.Kind == trace.KindSystem || s.Kind == trace.KindMessage) {
		parts = append(parts, s.Type)
	}
	if s.ExitCode != nil {
		parts = append(parts, "exit="+strconv.Itoa(*s.ExitCode))
	}
	if s.IsError {
		parts = append(parts, "error")
	}
	if s.Kind == trace.KindToolResult && s.Pair != nil {
		parts = append(parts, "for S"+strconv.Itoa(*s.Pair))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// stepBody is the text of a step a quote may come from: what CheckEvidence
// searches (the text, then a call's arguments).
func stepBody(s *trace.Step) string {
	switch {
	case s.Args == "":
		return s.Text
	case s.Text == "":
		return s.Args
	default:
		return s.Text + "\n" + s.Args
	}
}

// compact drops trailing blanks from every line and collapses runs of empty
// lines to one, and nothing else: leading whitespace is kept because it is
// meaning in code (a Python block an agent wrote in a chat step cannot be
// judged without its indentation). Quotes are checked whitespace-normalised,
// so a quote copied from the compacted text still matches the original.
func compact(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r", ""), "\n")
	out := lines[:0]
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" && blank {
			continue
		}
		blank = l == ""
		out = append(out, l)
	}
	// Empty lines at either end, not the first line's indentation.
	return strings.Trim(strings.Join(out, "\n"), "\n")
}

// cut keeps the first two thirds and the last third of limit runes of s,
// breaking at a line end when one is near, and says how much it left out.
func cut(s string, limit int) string {
	n := utf8.RuneCountInString(s)
	if limit <= 0 || n <= limit {
		return s
	}
	headEnd := byteOffset(s, limit*2/3)
	tailStart := byteOffset(s, n-(limit-limit*2/3))
	// Prefer whole lines when a line break is within the last (first)
	// quarter of the kept head (tail).
	if i := strings.LastIndexByte(s[:headEnd], '\n'); i > headEnd-headEnd/4 {
		headEnd = i
	}
	if i := strings.IndexByte(s[tailStart:], '\n'); i >= 0 && i < (len(s)-tailStart)/4 {
		tailStart += i + 1
	}
	dropped := utf8.RuneCountInString(s[headEnd:tailStart])
	// The tail keeps its leading spaces: when it starts at a line, they are
	// that line's indentation.
	return strings.TrimRight(s[:headEnd], " \n") + "\n[… " + thousands(dropped) + " characters cut …]\n" + strings.TrimLeft(s[tailStart:], "\n")
}

// byteOffset returns the byte offset of the rune at index runes in s.
func byteOffset(s string, runes int) int {
	i := 0
	for off := range s {
		if i == runes {
			return off
		}
		i++
	}
	return len(s)
}

// thousands formats n with comma separators: 12,345.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// stepsText renders the given steps in order, replacing a text identical to
// one shown earlier in the same list by a reference to it, so that every
// reference points at a step the judge can see.
func (r *rendered) stepsText(steps []int) string {
	var b strings.Builder
	first := map[string]int{}
	for _, i := range steps {
		key := r.dupKeys[i]
		if j, seen := first[key]; seen && key != "" {
			fmt.Fprintf(&b, "%s\n(identical to S%d)\n", r.heads[i], j)
			continue
		}
		if key != "" {
			first[key] = i
		}
		b.WriteString(r.blocks[i])
	}
	return b.String()
}

// hintsText lists the hints that cite at least one of the visible steps.
func (r *rendered) hintsText(visible map[int]bool) string {
	var b strings.Builder
	for _, f := range r.hints {
		shown := false
		for _, s := range f.Steps {
			shown = shown || visible[s]
		}
		if !shown {
			continue
		}
		// System failures are named too: the judge may confirm them.
		fmt.Fprintf(&b, "- %s", strings.TrimSpace(f.Mode+" "+taxonomy.Name(f.Mode)))
		if f.Detector != "" {
			fmt.Fprintf(&b, " (detector %s)", f.Detector)
		}
		fmt.Fprintf(&b, " at %s", stepList(f.Steps))
		if f.Quote != "" {
			// Unescaped, so that a judge confirming the hint can copy it.
			fmt.Fprintf(&b, `: "%s"`, trace.Clip(trace.NormalizeSpace(f.Quote), 200))
		}
		if f.Explanation != "" {
			fmt.Fprintf(&b, ". %s", f.Explanation)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// stepList formats step indices as step ids: S3, S7.
func stepList(steps []int) string {
	ids := make([]string, len(steps))
	for i, s := range steps {
		ids[i] = "S" + strconv.Itoa(s)
	}
	return strings.Join(ids, ", ")
}

// spanOf describes steps in ascending order as runs of consecutive ids:
// S3-S40, S3, or S2-S7, S12.
func spanOf(steps []int) string {
	var runs []string
	for i := 0; i < len(steps); {
		j := i
		for j+1 < len(steps) && steps[j+1] == steps[j]+1 {
			j++
		}
		if i == j {
			runs = append(runs, fmt.Sprintf("S%d", steps[i]))
		} else {
			runs = append(runs, fmt.Sprintf("S%d-S%d", steps[i], steps[j]))
		}
		i = j + 1
	}
	return strings.Join(runs, ", ")
}
