package detect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/faultline/faultline/trace"
)

// RoleBreach finds FM-1.2 where one agent of a chat writes another agent's turn.
var RoleBreach = &Detector{
	Name: "role-breach",
	Mode: "FM-1.2",
	Doc: `An agent of a multi-agent chat writes a section of its own message as another agent's turn.
The agents are the speakers the chat's steps name. A section is presented as another agent's when a
markdown heading, or a bold label opening a line, names that agent as the author of what follows:
the bare name alone on its line ("**Coder:**") over code or first-person text that addresses no
one; the name with a possessive and a work product ("**Coder's output:**", "## Coder's
Implementation", "### Tester's findings"); or the name, a dash and a short title ending in a work
product ("## Tester — Verification Report"). Addressing another agent is not this: "**To Coder:**",
"### Delegation to Coder", "**Coder — please implement exactly this:**", "**Tester — once Coder
submits, verify:**", "Coder, please …", plan items ("1. **Coder** — design …"), and labels naming
the speaker itself. A section whose first line repeats an earlier message of the agent it names is a
quotation, not a breach. Lines inside code blocks and the task statement (which chat formats log in
the first speaker's seat) are not read. One finding per message, citing it and quoting its first
such label; confidence 0.8.
Blind spots: breaches without such a label are not seen (a Planner that settles a dispute the agents
were asked to resolve, or writes under its own name the code it should delegate); nor are labels in
plain text ("Coder: …"), in another spelling of the agent's name, or naming an agent that never
speaks in the chat (a Planner that writes "**Coder:**" for a Coder who never gets a turn). Code a format logs without fences (AppWorld's supervisor writes bare Python) is read as
prose, so a comment there shaped like such a label would be misread.`,
	Run: runRoleBreach,
}

func runRoleBreach(p *Pass) {
	t := p.Trace
	agents := chatAgents(t)
	if len(agents) < 2 {
		return
	}
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Agent == "" || s.Kind == trace.KindToolCall || !trace.ByAgent(s) || isTaskStatement(t, i) {
			continue
		}
		var quote string
		var others []string
		for _, sec := range labelledSections(s.Text) {
			other := breachedRole(sec, agents, s.Agent)
			if other == "" || quotesEarlier(t, i, other, sec.body) {
				continue
			}
			if quote == "" {
				quote = sec.line
			}
			if !slices.Contains(others, other) {
				others = append(others, other)
			}
		}
		if quote == "" {
			continue
		}
		for k, o := range others {
			others[k] = o + "'s"
		}
		p.Report(trace.Finding{
			Steps:      []int{i},
			Quote:      quote,
			Confidence: 0.8,
			Explanation: fmt.Sprintf("%s writes, in its own message, what it presents as %s work: it acts in a role that another agent of the chat holds.",
				s.Agent, strings.Join(others, " and ")),
		})
	}
}

// section is a part of a message opened by a markdown heading or by a bold
// label at the start of a line.
type section struct {
	line  string // the opening line, trimmed
	label string // the heading's text, or the bold text
	rest  string // what follows the bold text on its line
	body  string // the text the label opens
}

// labelledSections splits a message at its headings and bold labels. A
// heading's section runs to the next heading of the same or a higher level;
// a bold label's to the next heading or bold label.
func labelledSections(text string) []section {
	type opener struct {
		section
		start, end, level int // level 0 for a bold label
	}
	var ops []opener
	var open []int // headings whose section is still running, outermost first
	for at, line := range proseLines(text) {
		trimmed := strings.TrimSpace(line)
		label, rest, level, ok := sectionLabel(trimmed)
		if !ok {
			continue
		}
		if n := len(ops); n > 0 && ops[n-1].level == 0 && ops[n-1].end < 0 {
			ops[n-1].end = at
		}
		for level > 0 && len(open) > 0 && ops[open[len(open)-1]].level >= level {
			ops[open[len(open)-1]].end = at
			open = open[:len(open)-1]
		}
		ops = append(ops, opener{section: section{line: trimmed, label: label, rest: rest}, start: at + len(line), end: -1, level: level})
		if level > 0 {
			open = append(open, len(ops)-1)
		}
	}
	out := make([]section, len(ops))
	for k, o := range ops {
		end := o.end
		if end < 0 {
			end = len(text)
		}
		o.body = text[min(o.start, end):end]
		out[k] = o.section
	}
	return out
}

// sectionLabel reads a line that opens a section: "## Title" (level 2) or
// "**Label** rest" (level 0).
func sectionLabel(line string) (label, rest string, level int, ok bool) {
	if strings.HasPrefix(line, "**") {
		inner, rest, found := strings.Cut(line[2:], "**")
		return strings.TrimSpace(inner), strings.TrimSpace(rest), 0, found && inner != ""
	}
	for level < len(line) && line[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || level == len(line) || line[level] != ' ' {
		return "", "", 0, false
	}
	label = strings.TrimSpace(line[level:])
	if strings.HasPrefix(label, "**") && strings.HasSuffix(label, "**") && len(label) > 4 {
		label = label[2 : len(label)-2]
	}
	return label, "", level, label != ""
}

// workProducts are the words that name what an agent hands over, at the end
// of a label that attributes it: "Coder's output", "Tester — Verification Report".
var workProducts = setOf("output", "implementation", "code", "solution", "answer", "response", "reply",
	"findings", "report", "results", "verification", "tests", "suite", "submission", "patch", "fix", "turn")

// addressing are first words of a title after "Name —" that make it an
// instruction to the agent rather than its work: "Coder — please implement …".
var addressing = setOf("please", "once", "when", "after", "before", "then", "you", "your", "kindly",
	"can", "could", "would", "will", "should", "must", "to", "for", "send", "provide", "write", "give",
	"share", "submit", "prepare", "draft", "implement", "run", "verify", "check", "review", "fix", "add",
	"update", "make", "return", "report")

// breachedRole returns the agent other than the speaker whose turn a section
// is presented as, or "".
func breachedRole(sec section, agents map[string]bool, speaker string) string {
	name := namedAgent(sec.label, agents)
	if name == "" || name == speaker || strings.Trim(sec.rest, ": ") != "" {
		return ""
	}
	after := sec.label[len(name):]
	switch {
	case strings.Trim(after, ": ") == "":
		if inOwnVoice(sec.body) {
			return name
		}
	case strings.HasPrefix(after, "'s ") || strings.HasPrefix(after, "’s "):
		_, title, _ := strings.Cut(after, "s ")
		if namesWork(title, false) && strings.TrimSpace(sec.body) != "" {
			return name
		}
	default:
		for _, dash := range []string{" — ", " – ", " - ", ": "} {
			if title, ok := strings.CutPrefix(after, dash); ok && namesWork(title, true) && strings.TrimSpace(sec.body) != "" {
				return name
			}
		}
	}
	return ""
}

// namedAgent returns the longest agent name that label starts with as a
// whole word, or "".
func namedAgent(label string, agents map[string]bool) string {
	best := ""
	for a := range agents {
		if len(a) <= len(best) || !strings.HasPrefix(label, a) {
			continue
		}
		if rest := label[len(a):]; rest == "" || !isWordByte(rest[0]) {
			best = a
		}
	}
	return best
}

// isWordByte reports whether c is a word character as \b sees one (ASCII).
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// namesWork reports whether a short title ends in a work product ("output:",
// "Verification Report"); with instruction set, a title opening with a request
// ("please implement this") does not count.
func namesWork(title string, instruction bool) bool {
	words := lowerWords(title)
	if len(words) == 0 || len(words) > 5 || !workProducts[words[len(words)-1]] {
		return false
	}
	return !instruction || !addressing[words[0]]
}

// inOwnVoice reports whether a section under a bare name reads as that
// agent's turn rather than as instructions to it: it holds code or opens in
// the first person, and its first sentence addresses no one.
func inOwnVoice(body string) bool {
	var first string
	for _, line := range proseLines(body) {
		if first = strings.TrimSpace(line); first != "" {
			break
		}
	}
	if first == "" {
		return false
	}
	first = sentences(first)[0]
	for _, w := range lowerWords(first) {
		if w == "you" || w == "your" || w == "please" {
			return false
		}
	}
	if strings.Contains(body, "```") {
		return true
	}
	for _, opener := range []string{"I ", "I'", "Let me ", "Here is ", "Here's ", "My ", "We "} {
		if strings.HasPrefix(first, opener) {
			return true
		}
	}
	return false
}

// quotesEarlier reports whether a section repeats what agent said before
// step i: the first line of the section of twenty bytes or more occurs in one
// of its earlier messages.
func quotesEarlier(t *trace.Trace, i int, agent, body string) bool {
	var probe string
	for line := range strings.Lines(body) {
		if l := strings.TrimSpace(line); len(l) >= 20 && !strings.HasPrefix(l, "```") {
			probe = l
			break
		}
	}
	if probe == "" {
		return false
	}
	for j := range i {
		if s := &t.Steps[j]; s.Agent == agent && strings.Contains(s.Text, probe) {
			return true
		}
	}
	return false
}
