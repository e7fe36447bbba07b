package detect

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// AnnouncedActionMismatch finds FM-2.6 where the agent says it will do one thing and does another.
var AnnouncedActionMismatch = &Detector{
	Name: "announced-action-mismatch",
	Mode: "FM-2.6",
	Doc: `The agent announces its next action and the calls that follow do something else.
It reads what the agent says (messages, reasoning, the explanations of plan updates). A sentence of
intent ("I'll", "I will", "I'm going to", "Let me", "Next, I", "Now I", or an instruction to itself
opening with a verb of investigation: "Check …", "Compare …", "Read …", "Trace …") that names a tool
(one the run calls, by full or short MCP name, e.g. log_analysis, or a snake_case name introduced as
a tool: "with metric_analysis") or a file (a name with an extension) announces an action; the
announcements among a step's last five sentences count together. The announcement is kept when one
of the next two tool calls (plan updates aside, before the agent speaks again) uses an announced
tool or names an announced tool or file in its arguments; a preparatory call (making a directory for
the announced script) is allowed that way. Otherwise it is a mismatch, confidence 0.6, or 0.75 when
no announced tool is called anywhere later in the run. Sentences with a negation ("not", "instead
of", "skip", "avoid", "already") are not announcements.
When the announced tool is called, the call must also target what the sentence names: a call whose
entity arguments (service_name, pod, object_name and the like) name none of the sentence's words,
while the sentence names another entity (one that some call of the run targets, or a hyphenated name
a tool output gives as namespace/Kind/name) — "the logs of ad" and then log_analysis for frontend —
is a mismatch too, confidence 0.6. Each mismatch is one finding citing the words and the calls.
Blind spots: announcements that name a data source in words ("check the logs"), an entity the run
never meets, or a command inside a tool ("grep") are not matched, so most mismatches in substance,
such as reading "flag adFailure is on" and then blaming the ad service, are left to the judge; an
announcement of several steps at once is satisfied by any of them.`,
	Run: runAnnouncedActionMismatch,
}

var (
	// A sentence of intent says what the agent will do, or is an
	// instruction to itself: it opens with a verb of investigation. The
	// two are apart so that the first is tried only where its words begin
	// (see wordRule): as one expression, tried at every position of every
	// sentence, it was a twentieth of the receiver's time.
	intentPhrase = newWordRule(`(?i)\b(?:i'll|i will|i'm going to|i am going to|let me|let's|next,? i|now,? i)\b`,
		"i'll", "i will", "i'm going", "i am going", "let", "next", "now")
	intentVerb = text.Regexp(`(?i)^(?:` + strings.Join(intentVerbs, "|") + `)\b`)
	notIntent  = text.Regexp(`(?i)\b(?:not|n't|instead of|rather than|skip|skipping|avoid|without|already)\b`)
	fileName   = text.Regexp(`\b[\w.-]+\.(?:json|ya?ml|tsv|csv|log|txt|md|py|sh)\b`)
)

// notIntentWords and fileExtensions screen text before notIntent and
// fileName run (in lower case for notIntentWords): a match holds one of
// them. Each regexp tries a match at every position, and most sentences
// hold neither.
var (
	notIntentWords = []string{"not", "n't", "instead", "rather", "skip", "avoid", "without", "already"}
	fileExtensions = []string{".json", ".yaml", ".yml", ".tsv", ".csv", ".log", ".txt", ".md", ".py", ".sh"}
)

// fileNames returns the file names text names (see fileName).
func fileNames(text string) []string {
	if !containsAny(text, fileExtensions) {
		return nil
	}
	return fileName().FindAllString(text, -1)
}

func runAnnouncedActionMismatch(p *Pass) {
	t, f := p.Trace, p.facts
	if !f.agentActed() {
		return
	}
	vocab := f.toolVocabulary()
	type pending struct {
		said     int
		sentence string
		tools    map[string]bool
		files    []string
		calls    []int
	}
	var open *pending
	settle := func() {
		if open == nil || len(open.calls) == 0 {
			open = nil
			return
		}
		conf := 0.6
		if len(open.tools) > 0 && !calledLater(t, open.said, open.tools) {
			conf = 0.75
		}
		next := "next call"
		if len(open.calls) > 1 {
			next = "next two calls"
		}
		p.Report(trace.Finding{
			Steps:      append([]int{open.said}, open.calls...),
			Quote:      open.sentence,
			Confidence: conf,
			Explanation: fmt.Sprintf("At step %d the agent announced %s, but its %s (%s) did something else.",
				open.said, strings.Join(announced(open.tools, open.files), " or "), next, joinSteps(t, open.calls)),
		})
		open = nil
	}
	for i := range t.Steps {
		s := &t.Steps[i]
		if text := f.agentText(i); text != "" {
			settle()
			if sentence, tools, files := announcement(text, vocab); sentence != "" {
				open = &pending{said: i, sentence: sentence, tools: tools, files: files}
			}
		}
		if open == nil || s.Kind != trace.KindToolCall || isPlanTool(s.Tool) {
			continue
		}
		if open.tools[s.Tool] || open.tools[shortTool(s.Tool)] || mentionsAny(s.Args, open.tools, open.files) {
			if named, targets := otherTarget(f, open.sentence, i); named != "" {
				p.Report(trace.Finding{
					Steps:      []int{open.said, i},
					Quote:      open.sentence,
					Confidence: 0.6,
					Explanation: fmt.Sprintf("At step %d the agent announced work on %s, but its next call (step %d, %s) targets %s.",
						open.said, named, i, s.Tool, strings.Join(targets, ", ")),
				})
			}
			open = nil
			continue
		}
		open.calls = append(open.calls, i)
		if len(open.calls) == 2 {
			settle()
		}
	}
	settle()
}

// targetKeys are the argument names by which tools are told which entity to
// look at.
var targetKeys = []string{"service_name", "service", "services", "pod", "pod_name", "deployment", "object", "object_name", "k8_object_name", "k8s_object_name", "entity", "app"}

// targetsOf returns the entities a call's top-level arguments name, by their
// name part (ad in otel-demo/Service/ad).
func targetsOf(args map[string]json.RawMessage) []string {
	var out []string
	for _, k := range targetKeys {
		raw, ok := args[k]
		if !ok {
			continue
		}
		var one string
		var many []string
		if json.Unmarshal(raw, &one) == nil {
			many = []string{one}
		} else if json.Unmarshal(raw, &many) != nil {
			continue
		}
		for _, s := range many {
			if s != "" {
				out = append(out, strings.ToLower(s[strings.LastIndexByte(s, '/')+1:]))
			}
		}
	}
	return out
}

// otherTarget reports, for a call whose tool was announced, an entity the
// announcement names when the call targets only others: the entity named
// (see facts.isEntity) and the call's targets. It returns ""
// when the call targets nothing, or something the sentence names.
func otherTarget(f *facts, sentence string, call int) (string, []string) {
	targets := f.call(call).targets
	if len(targets) == 0 {
		return "", nil
	}
	words := strings.FieldsFunc(strings.ToLower(sentence), func(r rune) bool {
		return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z')
	})
	names := func(w, target string) bool {
		return w == target || strings.HasPrefix(target, w+"-") || strings.HasPrefix(w, target+"-")
	}
	for _, w := range words {
		for _, target := range targets {
			if names(w, target) {
				return "", nil
			}
		}
	}
	for _, w := range words {
		if len(w) >= 2 && f.isEntity(w) {
			return w, targets
		}
	}
	return "", nil
}

// joinSteps names calls by step and tool: "step 71 (shell), step 73 (shell)".
func joinSteps(t *trace.Trace, calls []int) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = fmt.Sprintf("step %d, %s", c, t.Steps[c].Tool)
	}
	return strings.Join(parts, "; ")
}

// intentWords and intentVerbs screen sentences, in lower case, before
// intentStart reads them: a sentence of intent holds one of the words or
// opens with one of the verbs.
var (
	intentWords = []string{"i'll", "i will", "going to", "let me", "let's", "next", "now"}
	intentVerbs = []string{"check", "compare", "look", "read", "run", "trace", "count", "inspect", "query", "search", "grep",
		"list", "open", "examine", "verify", "fetch", "get", "find", "follow", "use", "analyse", "analyze", "review", "pull",
		"scan", "summarise", "summarize"}
)

// intentStart returns where a sentence's intent begins: at its start when
// it opens with a verb of intent, else where its first phrase of intent
// begins; -1 when it has neither.
func intentStart(s string) int {
	if intentVerb().MatchString(s) {
		return 0
	}
	return intentPhrase.index(newPrompt(s))
}

func startsWithAny(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// announcement returns what text announces: the tools and files named by
// its sentences of intent among its last five (what an agent says it does
// next comes at the end of what it says; an announcement of several steps
// names them all), and the first of those sentences, to quote.
func announcement(text string, vocab map[string]bool) (string, map[string]bool, []string) {
	all := sentences(text)
	quote := ""
	tools := map[string]bool{}
	var files []string
	for _, s := range all[max(0, len(all)-5):] {
		lower := strings.ToLower(s)
		if !containsAny(lower, intentWords) && !startsWithAny(lower, intentVerbs) {
			continue // cheaply: no phrase of intent
		}
		at := intentStart(s)
		if at < 0 || containsAny(lower, notIntentWords) && notIntent().MatchString(s) {
			continue
		}
		rest := s[at:]
		named, named2 := toolsNamed(rest, vocab), fileNames(rest)
		if len(named) == 0 && len(named2) == 0 {
			continue
		}
		if quote == "" {
			quote = s
		}
		for t := range named {
			tools[t] = true
		}
		files = append(files, named2...)
	}
	return quote, tools, files
}

func mentionsAny(args string, tools map[string]bool, files []string) bool {
	for name := range tools {
		if strings.Contains(args, name) {
			return true
		}
	}
	for _, file := range files {
		if strings.Contains(args, file) {
			return true
		}
	}
	return false
}

// calledLater reports whether any of the tools is called after step i.
func calledLater(t *trace.Trace, i int, tools map[string]bool) bool {
	for j := i + 1; j < len(t.Steps); j++ {
		if s := &t.Steps[j]; s.Kind == trace.KindToolCall && (tools[s.Tool] || tools[shortTool(s.Tool)]) {
			return true
		}
	}
	return false
}

func announced(tools map[string]bool, files []string) []string {
	var out []string
	for name := range tools {
		out = append(out, name)
	}
	slices.Sort(out)
	return append(out, files...)
}
