package discover

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
	"github.com/faultline/faultline/trace/toolcall"
)

// Kind is what a signature is made from.
type Kind string

// The kinds of signature.
const (
	// KindError: the first meaningful line of a failed tool result.
	KindError Kind = "errors"
	// KindEnding: the run's last tool calls and how it ended.
	KindEnding Kind = "endings"
	// KindFinding: a finding's mode and the text at its first step.
	KindFinding Kind = "findings"
)

// Kinds lists every kind of signature, in the order they are described.
var Kinds = []Kind{KindError, KindEnding, KindFinding}

// Signature is a recurring trait of failing runs: what kind it is, its key
// (the tool of an error, the mode of a finding; empty for an ending) and
// its normalised text.
type Signature struct {
	Kind     Kind   `json:"kind"`
	Key      string `json:"key,omitempty"`
	Template string `json:"template"`
}

// String is the signature as one line, which names it: two signatures are
// the same when their strings are.
func (s Signature) String() string {
	if s.Key == "" {
		return string(s.Kind) + " " + s.Template
	}
	return string(s.Kind) + " " + s.Key + ": " + s.Template
}

// Occurrence is a signature found on a trace, at a step (-1: none), with
// the step's text as it is (its first meaningful line, or the call).
type Occurrence struct {
	Signature Signature
	Step      int
	Quote     string
}

// Site is a finding's mode and the first step it cites (-1: none).
type Site struct {
	Mode string
	Step int
}

// Limits of what a signature reads of a step.
const (
	// lineLimit is how much of a line a template is made from: enough for
	// an error's message, not its stack or data.
	lineLimit = 200
	// headWords is how many words of a command its head keeps: the
	// program and its subcommand (kubectl get, git diff).
	headWords = 2
)

// SignatureOptions say which signatures a trace contributes.
type SignatureOptions struct {
	Kinds map[Kind]bool
	// LastCalls is how many of the last tool calls an ending shows.
	LastCalls int
}

// Signatures returns the signatures of one trace, each once (at its first
// occurrence), from its picked steps (in index order, as store.StepPick
// takes them: the failed results, the last calls, the last step, the
// finding sites) and the sites of its findings.
func Signatures(steps []trace.Step, sites []Site, opt SignatureOptions) []Occurrence {
	var out []Occurrence
	seen := map[string]bool{}
	add := func(o Occurrence) {
		if key := o.Signature.String(); !seen[key] {
			seen[key] = true
			out = append(out, o)
		}
	}
	if opt.Kinds[KindError] {
		for i := range steps {
			st := &steps[i]
			if !store.FailedResult(st) {
				continue
			}
			line := FirstLine(st.Text, lineLimit)
			if line == "" {
				line = fmt.Sprintf("(no output, exit code %s)", exitText(st.ExitCode))
			}
			add(Occurrence{Signature: Signature{Kind: KindError, Key: toolName(st.Tool), Template: Normalise(line)}, Step: st.Index, Quote: line})
		}
	}
	if opt.Kinds[KindEnding] && len(steps) > 0 {
		add(ending(steps, opt.LastCalls))
		// How the run ended whatever its last calls were: runs that end
		// alike by different paths (no answer after the data, say).
		add(ending(steps, 0))
	}
	if opt.Kinds[KindFinding] {
		for _, site := range sites {
			add(findingSite(steps, site))
		}
	}
	return out
}

func exitText(code *int) string {
	if code == nil {
		return "none"
	}
	return fmt.Sprint(*code)
}

func toolName(tool string) string {
	if tool == "" {
		return "(unnamed tool)"
	}
	return tool
}

// ending is the shape of the run's last calls and how it ended: the calls
// as tool and command head (shell:kubectl get), then what the last step
// was; with lastCalls 0, "…" for any calls. The last step is the picked
// step of the highest index.
func ending(steps []trace.Step, lastCalls int) Occurrence {
	var calls []string
	for i := len(steps) - 1; i >= 0 && len(calls) < lastCalls; i-- {
		if steps[i].Kind == trace.KindToolCall {
			calls = append(calls, callShape(&steps[i]))
		}
	}
	var b strings.Builder
	switch {
	case lastCalls == 0:
		b.WriteString(anyCalls)
	case len(calls) == 0:
		b.WriteString("(no tool call)")
	}
	for i := len(calls) - 1; i >= 0; i-- {
		b.WriteString(calls[i])
		if i > 0 {
			b.WriteString(callMark)
		}
	}
	last := &steps[len(steps)-1]
	b.WriteString(endingMark + endingOf(last))
	return Occurrence{Signature: Signature{Kind: KindEnding, Template: b.String()}, Step: last.Index, Quote: quoteOf(last)}
}

// How an ending's template joins its calls, and its calls to how it ended.
const (
	callMark   = " → "
	endingMark = " ⇒ ends with "
	anyCalls   = "…"
)

// endingOf names how a run ended, from its last step.
func endingOf(st *trace.Step) string {
	switch {
	case st.Kind == trace.KindFinal:
		return "a final answer"
	case st.Kind == trace.KindError:
		return "an error"
	case store.FailedResult(st):
		return "a failed tool result"
	case st.Kind == trace.KindToolResult:
		return "a tool result"
	case st.Kind == trace.KindToolCall:
		return "a tool call"
	case st.Kind == trace.KindMessage, st.Kind == trace.KindReasoning:
		return "a " + string(st.Kind) + ", no answer"
	}
	return "a " + string(st.Kind) + " step"
}

// callShape is a call's tool and, for a command, its head, normalised.
func callShape(st *trace.Step) string {
	head := commandHead(command(st.Args))
	if head == "" {
		return toolName(st.Tool)
	}
	return toolName(st.Tool) + ":" + Normalise(head)
}

// commandKey finds where the command of arguments cut short begins, and
// jsonString the strings after it (the last one possibly unterminated).
var (
	commandKey = regexp.MustCompile(`"(?:command|cmd|input|code|script)"\s*:`)
	jsonString = regexp.MustCompile(`"((?:[^"\\]|\\.)*)(?:"|\\?$)`)
)

// commandScan is how much of cut arguments is read for their command.
const commandScan = 256

// shellWords are the argv words that only say a shell runs the command.
var shellWords = map[string]bool{"bash": true, "sh": true, "zsh": true, "/bin/bash": true, "/bin/sh": true, "/bin/zsh": true,
	"/usr/bin/bash": true, "-lc": true, "-c": true}

// command is the command line a call runs, as toolcall.Command reads it;
// for arguments cut short (as a store reads them, to a limit), which are
// no longer JSON, the first string of the command that is not a shell's
// own word. "" when the call runs no command.
func command(args string) string {
	trimmed := strings.TrimSpace(args)
	if !strings.HasPrefix(trimmed, "{") {
		return ""
	}
	if cmd := toolcall.Command(args); cmd != args {
		return cmd
	}
	if json.Valid([]byte(trimmed)) {
		return ""
	}
	loc := commandKey.FindStringIndex(trimmed)
	if loc == nil {
		return ""
	}
	// A head is in the first words: the rest need not be scanned.
	rest := trimmed[loc[1]:]
	rest = rest[:min(len(rest), commandScan)]
	for _, m := range jsonString.FindAllStringSubmatch(rest, -1) {
		if !shellWords[m[1]] {
			return strings.NewReplacer(`\n`, "\n", `\"`, `"`, `\\`, `\`, `\t`, "\t").Replace(m[1])
		}
	}
	return ""
}

// commandHead is the program a command line runs and its subcommand when
// it has one (a word, not an option, a path or a value); "" when the text
// does not start with a program (a patch's "*** Begin Patch").
func commandHead(cmd string) string {
	line := FirstLine(cmd, lineLimit)
	if r, _ := utf8.DecodeRuneInString(line); !unicode.IsLetter(r) && !strings.ContainsRune("./~_", r) {
		return ""
	}
	var words []string
	for _, w := range strings.Fields(line) {
		if len(words) == headWords || (len(words) > 0 && !isWord(w)) || w == "|" || w == "&&" || w == ";" {
			break
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

func isWord(w string) bool {
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' && w[0] != '-' || r == '_') {
			return false
		}
	}
	return true
}

// quoteOf is a step's text as a quote: its first meaningful line, or the
// command a call runs, or its arguments.
func quoteOf(st *trace.Step) string {
	if line := FirstLine(st.Text, lineLimit); line != "" {
		return line
	}
	if cmd := command(st.Args); cmd != "" {
		return FirstLine(cmd, lineLimit)
	}
	return FirstLine(st.Args, lineLimit)
}

// findingSite is a finding's mode and the normalised text at its first
// step; the text is the step's kind alone when it has none, and
// "(unlocated)" when the finding cites no step.
func findingSite(steps []trace.Step, site Site) Occurrence {
	o := Occurrence{Signature: Signature{Kind: KindFinding, Key: site.Mode, Template: "(unlocated)"}, Step: -1}
	for i := range steps {
		if steps[i].Index != site.Step {
			continue
		}
		st := &steps[i]
		o.Step, o.Quote = st.Index, quoteOf(st)
		o.Signature.Template = string(st.Kind)
		if o.Quote != "" {
			o.Signature.Template += ": " + Normalise(o.Quote)
		}
		break
	}
	return o
}
