// Package report renders faultline's results for people: a trace step by
// step, and cohort summaries.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/faultline/faultline/internal/judge"
	"github.com/faultline/faultline/internal/score"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// TraceOptions tunes WriteTrace.
type TraceOptions struct {
	Full bool // print every text in full instead of a few lines
}

// Limits for texts shown in a trace view unless Full is set.
const (
	clipLines = 4
	clipBytes = 400
)

// WriteTrace prints a trace for a terminal: a header, the findings, what
// each LLM judge made of it, then every step with the findings that cite it.
func WriteTrace(w io.Writer, t *trace.Trace, judgements []store.JudgeRecord, opts TraceOptions) error {
	p := &printer{w: w}
	p.header(t)
	p.findings(t)
	p.judgements(judgements)
	p.steps(t, opts)
	return p.err
}

// judgements prints each judge's verdict on the whole trace: whether it
// succeeded, its summary and its guess at the outcome. A failed judgement
// is shown as such, since its absence of findings is not a verdict.
func (p *printer) judgements(records []store.JudgeRecord) {
	for _, r := range records {
		facts := []string{r.Status}
		if r.Windows > 1 {
			facts = append(facts, fmt.Sprintf("%d windows", r.Windows))
		}
		if r.Samples > 1 {
			facts = append(facts, fmt.Sprintf("%d samples", r.Samples))
		}
		if r.TaskSuccess != "" {
			facts = append(facts, "outcome guess: "+r.TaskSuccess)
		}
		p.printf("judge     %s: %s\n", r.Source, strings.Join(facts, " · "))
		if r.Status == judge.StatusFailed {
			p.printf("      no verdict: %s\n", trace.Clip(trace.NormalizeSpace(r.Error), 300))
		}
		if r.Summary != "" {
			p.text("      ", r.Summary)
		}
	}
	if len(records) > 0 {
		p.printf("\n")
	}
}

type printer struct {
	w   io.Writer
	err error
}

// printf prints a part of the view. What a trace holds comes in args,
// never in format, and each string argument is printed as one line of
// printable text (see printable): a trace cannot drive the terminal, nor
// start a line of the view.
func (p *printer) printf(format string, args ...any) {
	if p.err != nil {
		return
	}
	for i, arg := range args {
		if s, ok := arg.(string); ok {
			args[i] = Printable(s)
		}
	}
	_, p.err = fmt.Fprintf(p.w, format, args...)
}

// text prints text laid out in lines (a step's output, an explanation),
// each line after prefix, as PrintableLines makes it.
func (p *printer) text(prefix, s string) {
	if p.err == nil {
		_, p.err = io.WriteString(p.w, indent(PrintableLines(s), prefix)+"\n")
	}
}

func (p *printer) header(t *trace.Trace) {
	p.printf("trace     %s\n", t.ID)
	var facts []string
	for _, kv := range [][2]string{{"model", t.Model}, {"format", t.Format}, {"system", t.System}, {"scenario", t.Scenario}, {"trial", t.Trial}} {
		if kv[1] != "" {
			facts = append(facts, kv[0]+" "+kv[1])
		}
	}
	p.printf("run       %s\n", strings.Join(facts, " · "))
	p.printf("source    %s\n", t.Source)
	if t.Task != "" {
		p.printf("task      %s\n", TaskTitle(t.Task, 100))
	}
	line := fmt.Sprintf("%d steps: %s", len(t.Steps), text.Plural(t.CountKind(trace.KindToolCall), "tool call", "tool calls"))
	if t.Usage.TotalTokens > 0 {
		line += fmt.Sprintf(", %d tokens", t.Usage.TotalTokens)
	}
	if !t.Started.IsZero() {
		line += ", " + t.Started.UTC().Format("2006-01-02 15:04:05")
		if !t.Ended.IsZero() {
			line += " for " + t.Ended.Sub(t.Started).Round(time.Second).String()
		}
	}
	p.printf("size      %s\n", line)
	p.printf("outcome   %s\n", OutcomeText(trace.PrimaryOutcome(t.Outcomes)))
	if t.Diagnosis != nil {
		p.printf("diagnosis %s\n", t.Diagnosis.Source)
	} else if answer := scoredAnswer(t.Outcomes); answer != "" {
		p.printf("answer    %s\n", answer)
	}
	p.printf("\n")
}

// scoredAnswer says what faultline's scoring read as the run's answer (the
// step that showed it, and how) or, for a run it left unscored, why; "" when
// the run was not scored.
func scoredAnswer(outcomes []trace.Outcome) string {
	for _, o := range outcomes {
		if o.Source != score.OutcomeSource {
			continue
		}
		var d struct {
			Diagnosis, Status, Problem string
		}
		if json.Unmarshal([]byte(o.Detail), &d) != nil {
			return ""
		}
		switch {
		case d.Diagnosis != "":
			return d.Diagnosis
		case strings.HasPrefix(d.Problem, d.Status):
			return d.Problem
		}
		return d.Status + ": " + d.Problem
	}
	return ""
}

// findings prints one line per mode and source, then the evidence. Bare
// labels (no steps, quote or explanation) of one mode are listed together.
func (p *printer) findings(t *trace.Trace) {
	present := PresentFindings(t.Findings)
	if len(present) == 0 {
		p.printf("findings  none\n\n")
		return
	}
	p.printf("findings  %d\n", len(present))
	bare := map[string][]string{}
	var bareModes []string
	for _, f := range present {
		if len(f.Steps) == 0 && f.Quote == "" && f.Explanation == "" {
			if bare[f.Mode] == nil {
				bareModes = append(bareModes, f.Mode)
			}
			bare[f.Mode] = append(bare[f.Mode], SourceName(f))
			continue
		}
		p.printf("  %s  [%s]%s  steps %s\n", FindingTitle(f), SourceName(f), confidenceText(f), stepList(f.Steps))
		if f.Quote != "" {
			p.printf("      “%s”\n", trace.Clip(trace.NormalizeSpace(f.Quote), 120))
		}
		if f.Explanation != "" {
			p.text("      ", f.Explanation)
		}
	}
	sort.Strings(bareModes)
	for _, mode := range bareModes {
		p.printf("  %s %s  [%s]  not located\n", mode, taxonomy.Name(mode), strings.Join(bare[mode], ", "))
	}
	if unmapped := unmappedLabels(t.Findings); len(unmapped) > 0 {
		p.printf("  unmapped labels (kept as written): %s\n", strings.Join(unmapped, "; "))
	}
	p.printf("\n")
}

func (p *printer) steps(t *trace.Trace, opts TraceOptions) {
	at := map[int][]trace.Finding{}
	for _, f := range PresentFindings(t.Findings) {
		for _, s := range f.Steps {
			at[s] = append(at[s], f)
		}
	}
	for i := range t.Steps {
		s := &t.Steps[i]
		p.printf("#%-4d %-8s %s\n", s.Index, KindLabel(s), StepTitle(s))
		if body := stepBody(s); body != "" {
			p.text("      ", clip(body, opts.Full))
		}
		for _, f := range at[i] {
			p.printf("      ⚑ %s [%s]\n", FindingTitle(f), SourceName(f))
		}
	}
}

// PresentFindings keeps the findings that say something is there: a mode
// marked present, or a located label whose mode is unknown (Who&When's
// "decisive error" at a step). They are the findings a trace view shows at
// their steps, in the terminal and in faultline serve.
func PresentFindings(fs []trace.Finding) []trace.Finding {
	var out []trace.Finding
	for _, f := range fs {
		if f.Verdict == trace.Present && (f.Mode != "" || (f.RawLabel != "" && len(f.Steps) > 0)) {
			out = append(out, f)
		}
	}
	return out
}

// FindingTitle names a finding by its mode, or by its label as written when
// the mode is unknown.
func FindingTitle(f trace.Finding) string {
	if f.Mode == "" {
		return f.RawLabel + " (mode not given)"
	}
	return f.Mode + " " + taxonomy.Name(f.Mode)
}

func unmappedLabels(fs []trace.Finding) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range fs {
		if f.Mode == "" && f.RawLabel != "" && len(f.Steps) == 0 && !seen[f.RawLabel] {
			seen[f.RawLabel] = true
			out = append(out, f.RawLabel)
		}
	}
	sort.Strings(out)
	return out
}

// KindLabel is a step's kind in a word, as views show it.
func KindLabel(s *trace.Step) string {
	switch s.Kind {
	case trace.KindToolCall:
		return "call"
	case trace.KindToolResult:
		return "result"
	default:
		return string(s.Kind)
	}
}

// StepTitle is the one-line summary after the step number.
func StepTitle(s *trace.Step) string {
	who := s.Role
	if s.Agent != "" {
		who = s.Agent
	}
	switch s.Kind {
	case trace.KindToolCall:
		return s.Tool + " " + trace.Clip(trace.NormalizeSpace(s.Args), 160)
	case trace.KindToolResult:
		var parts []string
		parts = append(parts, s.Tool)
		if s.ExitCode != nil {
			parts = append(parts, fmt.Sprintf("exit %d", *s.ExitCode))
		}
		if s.IsError {
			parts = append(parts, "ERROR")
		}
		if s.Pair != nil {
			parts = append(parts, fmt.Sprintf("(call #%d)", *s.Pair))
		}
		return strings.Join(parts, " ")
	case trace.KindSystem, trace.KindError:
		if s.Type != "" {
			return strings.TrimSpace(who + " " + s.Type)
		}
	}
	if s.Type != "" {
		return strings.TrimSpace(who + " (" + s.Type + ")")
	}
	return who
}

func stepBody(s *trace.Step) string {
	if s.Kind == trace.KindToolCall {
		return ""
	}
	return strings.TrimRight(s.Text, " \n\t")
}

func clip(s string, full bool) string {
	if full {
		return s
	}
	lines := strings.Split(s, "\n")
	cut := false
	if len(lines) > clipLines {
		lines, cut = lines[:clipLines], true
	}
	out := strings.Join(lines, "\n")
	if len(out) > clipBytes {
		out, cut = trace.Clip(out, clipBytes), true
		out = strings.TrimSuffix(out, "…")
	}
	if cut {
		out += fmt.Sprintf(" … [%d more bytes; --full shows all]", len(s)-len(out))
	}
	return out
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// SourceName names a finding's source, with its detector for a detector's.
func SourceName(f trace.Finding) string {
	if f.Detector != "" {
		return f.Source + " " + f.Detector
	}
	return f.Source
}

func confidenceText(f trace.Finding) string {
	if f.Confidence == 0 {
		return ""
	}
	return fmt.Sprintf(" confidence %.2f", f.Confidence)
}

// stepList is a finding's steps in order, however its source cited them.
func stepList(steps []int) string {
	if len(steps) == 0 {
		return "-"
	}
	parts := make([]string, len(steps))
	for i, s := range trace.SortedSteps(steps) {
		parts[i] = fmt.Sprint(s)
	}
	if len(parts) > 12 {
		parts = append(parts[:12], fmt.Sprintf("… (%d in all)", len(steps)))
	}
	return strings.Join(parts, ",")
}

// OutcomeText words an outcome for a table cell.
func OutcomeText(o *trace.Outcome) string {
	if o == nil || o.Success == nil {
		return "unscored"
	}
	word := "failure"
	if *o.Success {
		word = "success"
	}
	if o.Score != nil {
		return fmt.Sprintf("%s (%s %.2f)", word, o.Metric, *o.Score)
	}
	return word
}

// TaskTitle is the first meaningful line of a task prompt, clipped.
func TaskTitle(task string, n int) string {
	for _, line := range strings.Split(task, "\n") {
		line = strings.ReplaceAll(line, "**", "")
		line = strings.TrimSpace(strings.Trim(strings.TrimSpace(line), "#*=-_ "))
		// Skip headings and rules ("Task:", "=====") for the first real sentence.
		if len(line) >= 12 && !strings.HasSuffix(line, ":") {
			return trace.Clip(line, n)
		}
	}
	return "-"
}
