package detect

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

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
	// quoted matches a quotation: quotes at word boundaries, so that the
	// apostrophes of "the container's limit … the frontend's calls" do not
	// pair up.
	quoted   = text.Regexp(`(?:^|[\s(\[:])(?:"([^"\n]{15,200})"|'([^'\n]{15,200})'|“([^”\n]{15,200})”)(?:[\s.,;:)\]!?]|$)`)
	ellipsis = text.Regexp(`\.\.\.+|…`)
	hedge    = text.Regexp(`(?i)(?:about|approximately|approx\.?|around|roughly|nearly|almost|over|under|~|≈|>|<)\s*$`)
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
		for _, m := range quoted().FindAllStringSubmatch(claim, -1) {
			phrase := m[1] + m[2] + m[3]
			if len(strings.Fields(phrase)) >= 3 && !c.hasQuotation(phrase) {
				missing = append(missing, phrase)
				weight++
			}
		}
		for _, loc := range clockTime().FindAllStringIndex(claim, -1) {
			if v := claim[loc[0]:loc[1]]; !hedge().MatchString(claim[:loc[0]]) && !c.has(v) {
				missing = append(missing, v)
			}
		}
		for _, m := range decimal().FindAllStringSubmatchIndex(claim, -1) {
			v, pct := claim[m[2]:m[3]], m[5] > m[4]
			if significant(v) >= 2 && !hedge().MatchString(claim[:m[2]]) && !c.hasValue(v, pct) {
				missing = append(missing, claim[m[2]:m[5]])
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
		for _, m := range quoted().FindAllStringSubmatch(prose(t.Steps[final].Text), -1) {
			phrase := m[1] + m[2] + m[3]
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
