package detect

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// UnsupportedEvidence finds FM-3.3 where the answer cites evidence that no tool produced.
var UnsupportedEvidence = &Detector{
	Name: "unsupported-evidence",
	Mode: "FM-3.3",
	Doc: `The answer cites evidence that appears in no tool output of the run.
It reads ITBench Zero's diagnosis (the final agent_output.json, or the JSON printed in the final
message): the reasoning and evidence of entities, the condition and effect of propagations, the
explanations of alerts. From them it takes the checkable specifics: clock times with seconds
(17:46:18), decimal values with two significant digits or more (0.38, 106.4; a percentage also
matches its fraction and the reverse), and quoted phrases of three words or more (each part on its
own when the quotation elides with "..."), and the quoted phrases of the agent's final message. Each must occur in some tool output, tool argument or the
prompt, calls on the answer file itself excepted (phrases compared without regard to case or
spacing); values preceded by "about", "approximately", "~" and the like are not checked. It also
checks that each cause (contributing_factor true) named as namespace/Kind/name is named in some tool
output, by its name part (flagd-config in otel-demo/ConfigMap/flagd-config, four characters or more;
other names are answer-format's business). Reported when a quoted phrase or a cause is missing, or
two values are; one finding, confidence 0.55 plus 0.1 for each missing item (0.2 for a cause), up to
0.85.
Blind spots: values the agent computed itself (a rate, a duration) are reported when it states them
exactly; evidence described in words ("the logs show errors") cannot be checked; an answer whose
claims are all true of the data but wrong about the incident is the judge's to find.`,
	Run:      runUnsupportedEvidence,
	Finished: true,
}

var (
	clockTime = text.Regexp(`\b\d{1,2}:\d{2}:\d{2}\b`)
	decimal   = text.Regexp(`(?:^|[^\w.])(\d+\.\d+)(%?)`)
	ellipsis  = text.Regexp(`\.\.\.+|…`)
	hedge     = text.Regexp(`(?i)(?:about|approximately|approx\.?|around|roughly|nearly|almost|over|under|~|≈|>|<)\s*$`)
)

func runUnsupportedEvidence(p *Pass) {
	t, f := p.Trace, p.facts
	if !f.agentActed() {
		return
	}
	diagnosis, at, ok := f.diagnosisText()
	if !ok {
		return
	}
	answer := f.zeroAnswer(diagnosis)
	c := newCorpus(f)
	var missing []string
	weight := 0
	for _, claim := range claimTexts(answer) {
		for _, phrase := range quotations(claim) {
			if len(strings.Fields(phrase)) >= 3 && !c.hasQuotation(phrase) {
				missing = append(missing, phrase)
				weight++
			}
		}
		if digitsAround(claim, ':') {
			for _, loc := range clockTime().FindAllStringIndex(claim, -1) {
				if v := claim[loc[0]:loc[1]]; !hedgedBefore(claim[:loc[0]]) && !c.has(v) {
					missing = append(missing, v)
				}
			}
		}
		if digitsAround(claim, '.') {
			for _, m := range decimal().FindAllStringSubmatchIndex(claim, -1) {
				v, pct := claim[m[2]:m[3]], m[5] > m[4]
				if significant(v) >= 2 && !hedgedBefore(claim[:m[2]]) && !c.hasValue(v, pct) {
					missing = append(missing, claim[m[2]:m[5]])
				}
			}
		}
	}
	values := len(missing) - weight
	if values < 2 && weight == 0 {
		missing, values = nil, 0
	}
	// The agent's final message quotes evidence too ("traces show 'stream
	// closed due to server-side timeout'"); its quotations are held to the
	// same standard, its values are not (prose rounds and computes).
	final := lastAgentMessage(t)
	fromFinal := false
	if final >= 0 {
		for _, phrase := range quotations(prose(t.Steps[final].Text)) {
			if len(strings.Fields(phrase)) >= 3 && !slices.Contains(missing, phrase) && !c.hasQuotation(phrase) {
				missing = append(missing, phrase)
				weight++
				fromFinal = true
			}
		}
	}
	entities, _ := answer.objects("entities")
	for _, e := range entities {
		name, _ := e["name"].(string)
		part := name[strings.LastIndexByte(name, '/')+1:]
		if cause, _ := e["contributing_factor"].(bool); cause && entityName().MatchString(name) && len(part) >= 4 && !c.hasPhrase(part) {
			missing = append(missing, name)
			weight += 2
		}
	}
	if len(missing) == 0 {
		return
	}
	// A diagnosis printed in the final message is cited there; one from the
	// answer file where the file's content shows.
	steps := []int{at}
	if at < 0 || t.Steps[at].Kind != trace.KindFinal {
		steps = f.contentSteps(f.answerFile())
	}
	if fromFinal && !slices.Contains(steps, final) {
		steps = append(steps, final)
	}
	shown := missing
	if len(shown) > 5 {
		shown = shown[:5]
	}
	p.Report(trace.Finding{
		Steps:      steps,
		Quote:      quotable(t, steps, missing...),
		Confidence: min(0.85, 0.55+0.1*float64(values+weight)),
		Explanation: fmt.Sprintf("The diagnosis cites %s that no tool output, tool argument or prompt of the run contains: %s.",
			text.Plural(len(missing), "specific", "specifics"), strings.Join(quoteAll(shown), ", ")),
	})
}

// The expressions above are tried on every claim of every diagnosis, and
// Go's engine tries an expression without a literal to look for at every
// position: a claim is first checked, cheaply, for what each needs.

// quotations returns the quoted phrases of s, in order: 15 to 200
// characters, on one line, between "", ” or “”, whose opening quote
// starts the text or follows a space, a bracket or a colon and whose
// closing quote ends it or comes before a space or punctuation, so that
// the apostrophes of "the container's limit … the frontend's calls" do
// not pair up. A scan of the quotation marks does what an expression did
// (kept in the test, which holds the scan to it), a program of some six
// hundred instructions for its counted repetitions that cost a third of
// the detector.
func quotations(s string) []string {
	var phrases []string
	for i := 0; i < len(s); {
		phrase, end := quotationAt(s, i)
		if end < 0 {
			i++
			continue
		}
		phrases = append(phrases, phrase)
		i = end
	}
	return phrases
}

// quotationAt matches a quotation (see quotations) at offset i of s: the
// quoted phrase and where the match ends, or an end of -1. The quotation
// opens at i when i is 0, else after a space, parenthesis, bracket or
// colon at i.
func quotationAt(s string, i int) (string, int) {
	open := i
	if i > 0 || !strings.ContainsRune(`"'“`, utf8RuneAt(s, 0)) {
		if !strings.ContainsRune(" \t\n\f\r([:", rune(s[i])) {
			return "", -1
		}
		open = i + 1
	}
	var closing rune
	switch r := utf8RuneAt(s, open); r {
	case '"', '\'':
		closing = r
	case '“':
		closing = '”'
	default:
		return "", -1
	}
	start := open + utf8.RuneLen(utf8RuneAt(s, open))
	runes := 0
	for j := start; j < len(s); {
		r, size := utf8.DecodeRuneInString(s[j:])
		switch {
		case r == '\n':
			return "", -1
		case r == closing:
			if runes < 15 || runes > 200 {
				return "", -1
			}
			end := j + size
			if end < len(s) {
				if !strings.ContainsRune(" \t\n\f\r.,;:)]!?", rune(s[end])) {
					return "", -1
				}
				end++
			}
			return s[start:j], end
		}
		runes++
		j += size
	}
	return "", -1
}

// utf8RuneAt is the rune at offset i of s, or utf8.RuneError past its end.
func utf8RuneAt(s string, i int) rune {
	r, _ := utf8.DecodeRuneInString(s[min(i, len(s)):])
	return r
}

// digitsAround reports whether s holds sep between two ASCII digits, as a
// time (clockTime) and a decimal (decimal) must.
func digitsAround(s string, sep byte) bool {
	for i := 1; i+1 < len(s); i++ {
		if s[i] == sep && isDigit(s[i-1]) && isDigit(s[i+1]) {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// hedgeTail is more bytes than the longest hedge can take, folded to any
// case: hedge can only match there.
const hedgeTail = 48

// hedgedBefore reports whether the text before a value ends with a hedge,
// trying the expression on that end alone rather than at every position
// of everything before the value.
func hedgedBefore(before string) bool {
	before = strings.TrimRight(before, " \t\n\f\r") // \s
	return hedge().MatchString(before[max(0, len(before)-hedgeTail):])
}

// codeBlock matches a fenced block of code or data in a message.
var codeBlock = text.Regexp("(?s)```.*?(?:```|$)")

// prose returns a message without its fenced blocks and without a JSON
// object it prints (a diagnosis pasted into the final message), whose
// strings are data, not quotations.
func prose(text string) string {
	text = codeBlock().ReplaceAllString(text, " ")
	if open, end := strings.Index(text, "{"), strings.LastIndex(text, "}"); open >= 0 && end > open {
		text = text[:open] + " " + text[end+1:]
	}
	return text
}

// claimTexts returns the free-text fields of a Zero diagnosis that state
// evidence or reasoning.
func claimTexts(answer *zeroAnswer) []string {
	var out []string
	fields := map[string][]string{
		"entities":         {"reasoning", "evidence"},
		"propagations":     {"condition", "effect"},
		"alerts_explained": {"explanation"},
	}
	for _, section := range []string{"entities", "propagations", "alerts_explained"} {
		list, _ := answer.objects(section)
		for _, item := range list {
			for _, field := range fields[section] {
				if s, ok := item[field].(string); ok && s != "" {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// significant counts the significant digits of a decimal string.
func significant(v string) int {
	d := strings.Trim(strings.Replace(v, ".", "", 1), "0")
	return len(d)
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.Quote(x)
	}
	return out
}

// corpus is what the run saw: the prompt, and every tool call's arguments
// and output except those of calls on the answer file itself (which hold the
// answer, not evidence for it).
// Exact searches run over the texts as they are; phrases that are not found
// exactly are searched again in a lower-case, whitespace-collapsed copy,
// built once and only when needed.
type corpus struct {
	texts  []string
	folded string
}

func newCorpus(f *facts) *corpus {
	c := &corpus{texts: []string{f.t.Task, f.instructions()}}
	answer := f.task().Output
	for i := range f.t.Steps {
		s := &f.t.Steps[i]
		if s.Kind != trace.KindToolCall || (answer != "" && strings.Contains(s.Args, answer)) {
			continue
		}
		c.texts = append(c.texts, s.Args, f.output(i))
	}
	return c
}

func (c *corpus) has(v string) bool {
	for _, text := range c.texts {
		if strings.Contains(text, v) {
			return true
		}
	}
	return false
}

func (c *corpus) hasPhrase(phrase string) bool {
	if c.has(phrase) {
		return true
	}
	if !strings.ContainsAny(phrase, " \t\n") && phrase == strings.ToLower(phrase) {
		// A lower-case name (a Kubernetes object) appears as it is or not at
		// all; folding the whole corpus to look again would find nothing new.
		return false
	}
	if c.folded == "" {
		var b strings.Builder
		for _, text := range c.texts {
			b.WriteString(strings.ToLower(trace.NormalizeSpace(text)))
			b.WriteByte('\n')
		}
		c.folded = b.String()
	}
	return strings.Contains(c.folded, strings.ToLower(trace.NormalizeSpace(phrase)))
}

// hasQuotation looks for a quotation, each part on its own when the
// quotation elides with "..." or "…".
func (c *corpus) hasQuotation(q string) bool {
	for _, part := range ellipsis().Split(q, -1) {
		if part = strings.TrimSpace(part); part != "" && !c.hasPhrase(part) {
			return false
		}
	}
	return true
}

// hasValue looks for a decimal value, trailing zeros dropped, also as the
// fraction of a percentage or the percentage of a fraction.
func (c *corpus) hasValue(v string, percent bool) bool {
	if c.has(strings.TrimRight(v, "0")) {
		return true
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return false
	}
	decimals := len(v) - strings.IndexByte(v, '.') - 1
	other, prec := x*100, max(0, decimals-2)
	if percent {
		other, prec = x/100, decimals+2
	}
	o := strings.TrimRight(strconv.FormatFloat(other, 'f', prec, 64), "0")
	return c.has(strings.TrimSuffix(o, "."))
}
