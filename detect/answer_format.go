package detect

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/internal/itbench"
	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// AnswerFormat finds FM-1.1 where a usable answer breaks the format its task prescribes.
var AnswerFormat = &Detector{
	Name: "answer-format",
	Mode: "FM-1.1",
	Doc: `The answer deviates from the format the task prescribes.
It applies to ITBench Zero's diagnosis (the task requires agent_output.json) when its final content
is known (see missing-answer) and is a JSON object. It checks what the prompt makes mandatory: the
"entities", "propagations" and "alerts_explained" lists present (empty lists are allowed); every
entity with a boolean contributing_factor and non-empty reasoning and evidence; entity names and
propagation ends in the form namespace/Kind/name (three non-empty parts, no spaces) and free of
Kubernetes UIDs; and, when the prompt caps fields at N sentences ("no more than 2 sentences each"),
no such field longer. One finding listing up to five deviations; confidence 0.7, 0.8 with three or
more, 0.6 when the only deviations are sentence counts (sentences are counted heuristically).
Deviations that leave nothing to score (no entities list, no entity marked with contributing_factor)
are reported by missing-answer (FM-3.1) as well: the answer both breaks the prescribed format and
cannot be used.
Blind spots: answer files of other tasks (only Zero's schema is known); whether a Kind is a real
Kubernetes kind or a namespace exists; the prose-only rules of the prompt ("NEVER output anything
other than the final JSON") that are not about the file.`,
	Run:      runAnswerFormat,
	Finished: true,
}

var (
	entityName = text.Regexp(`^[^/\s]+/[^/\s]+/[^/\s]+$`)
	uid        = text.Regexp(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// sentenceEnd is a full stop, question or exclamation mark after a word
	// of two or more letters or digits and before a capital: a boundary that
	// abbreviations ("e.g. The") and decimals do not produce.
	sentenceEnd = text.Regexp(`[A-Za-z0-9)\]'"]{2}[.!?]+\s+[A-Z]`)
)

func runAnswerFormat(p *Pass) {
	t, f := p.Trace, p.facts
	spec := f.task()
	if !f.agentActed() || spec.Output != itbench.AnswerFile {
		return
	}
	a := f.answerFile()
	if !a.ContentKnown {
		return
	}
	answer := f.zeroAnswer(a.Content)
	if answer.top == nil {
		return // not a JSON object: nothing to compare with the schema (FM-3.1's)
	}
	entities, _ := answer.objects("entities")
	var problems []string
	var quotes []string
	note := func(quote, format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
		quotes = append(quotes, quote)
	}
	for _, section := range []string{"entities", "propagations", "alerts_explained"} {
		if _, ok := answer.objects(section); !ok {
			note("", "%q is missing or not a list", section)
		}
	}
	for k, e := range entities {
		name, _ := e["name"].(string)
		if _, ok := e["contributing_factor"].(bool); !ok {
			note(name, "entity %d (%s) has no boolean contributing_factor", k+1, name)
		}
		for _, field := range []string{"reasoning", "evidence"} {
			if v, _ := e[field].(string); strings.TrimSpace(v) == "" {
				note(name, "entity %d (%s) has no %s", k+1, name, field)
			}
		}
		checkName(name, fmt.Sprintf("entity %d name", k+1), note)
	}
	propagations, _ := answer.objects("propagations")
	for k, pr := range propagations {
		for _, end := range []string{"source", "target"} {
			if v, ok := pr[end].(string); ok {
				checkName(v, fmt.Sprintf("propagation %d %s", k+1, end), note)
			}
		}
	}
	formatProblems := len(problems)
	if spec.SentenceLimit > 0 {
		checkSentences(spec, answer, note)
	}
	if len(problems) == 0 {
		return
	}
	conf := 0.7
	switch {
	case formatProblems == 0:
		conf = 0.6
	case len(problems) >= 3:
		conf = 0.8
	}
	steps := f.contentSteps(a)
	shown := problems
	if len(shown) > 5 {
		shown = append(shown[:5:5], fmt.Sprintf("%d more", len(problems)-5))
	}
	p.Report(trace.Finding{
		Steps:       steps,
		Quote:       quotable(t, steps, append(quotes, a.File)...),
		Confidence:  conf,
		Explanation: fmt.Sprintf("%s breaks the format the task prescribes: %s.", a.File, strings.Join(shown, "; ")),
	})
}

func checkName(name, what string, note func(quote, format string, args ...any)) {
	switch {
	case name == "":
	case !entityName().MatchString(name):
		note(name, "%s %q is not namespace/Kind/name", what, name)
	case uid().MatchString(name):
		note(name, "%s %q contains a UID", what, name)
	}
}

// checkSentences notes every capped field, in any section, that holds more
// sentences than the task allows.
func checkSentences(spec *taskSpec, answer *zeroAnswer, note func(quote, format string, args ...any)) {
	for _, section := range []string{"entities", "propagations", "alerts_explained"} {
		list, _ := answer.objects(section)
		for k, item := range list {
			for _, field := range spec.LimitedFields {
				text, ok := item[field].(string)
				if !ok {
					continue
				}
				if n := len(sentenceEnd().FindAllStringIndex(text, -1)) + 1; n > spec.SentenceLimit {
					note(quoteFrom(text, 80), "%s %d %s has %d sentences, more than the %d allowed", section, k+1, field, n, spec.SentenceLimit)
				}
			}
		}
	}
}
