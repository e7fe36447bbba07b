package detect

import (
	"encoding/json"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
	"github.com/faultline/faultline/trace/toolcall"
)

// facts are observations about one trace that several detectors need: who
// acted, what each call ran, what the task asks for, what became of the
// required output. Run shares one facts value between all the detectors of
// a pass over a trace and each fact is computed at most once, on first use,
// so adding a detector that reads them adds no scan of the tool outputs.
//
// Nothing here judges a failure mode; detectors do. The helpers are
// format-neutral: they key on step kinds, roles and tool names, and read
// tool arguments as JSON when they are JSON.
type facts struct {
	t *trace.Trace

	spec     *taskSpec
	answer   *answerFacts
	zero     *zeroAnswer // the last answer text decoded in Zero's schema
	plans    []planUpdate
	plansOK  bool
	vocab    map[string]bool
	entities map[string]bool // word → whether it names an entity of the run
	calls    map[int]*callFacts
	reports  []harnessText
	reported bool
	outKeys  map[int]uint64
	agentAny int // 0 unknown, 1 yes, -1 no
}

func newFacts(t *trace.Trace) *facts {
	return &facts{t: t}
}

// isPrompt reports whether the step is a message addressed to the agent by a
// person or the harness: a request, a retry nudge. A named agent's message
// is not a prompt even in the user seat.
func isPrompt(s *trace.Step) bool {
	return s.Kind == trace.KindMessage && s.Agent == "" && (s.Role == trace.RoleUser || s.Role == trace.RoleHarness)
}

// agentActed reports whether the agent produced any step at all. A run where
// it never did is an infrastructure failure (SYS-1), and the detectors of
// agent behaviour stay silent on it.
func (f *facts) agentActed() bool {
	if f.agentAny == 0 {
		f.agentAny = -1
		for i := range f.t.Steps {
			if trace.ByAgent(&f.t.Steps[i]) {
				f.agentAny = 1
				break
			}
		}
	}
	return f.agentAny > 0
}

// failed reports whether a tool call's result reports a failure. A call
// without a result (a run cut short, a format that does not pair calls with
// results) has neither failed nor succeeded.
func (f *facts) failed(call int) bool { return toolcall.Failed(f.t, call) }

// succeeded reports whether a tool call has a result that reports no failure.
func (f *facts) succeeded(call int) bool { return toolcall.Succeeded(f.t, call) }

// output returns the text of a call's result, or "" when it has none.
func (f *facts) output(call int) string { return toolcall.Output(f.t, call) }

// callFacts is what a tool call's arguments say, read once: they are JSON
// for most tools, and several detectors need the command, the normalised
// request and the entities named.
type callFacts struct {
	toolcall.Call
	key     uint64   // see facts.callKey
	nearKey uint64   // see facts.nearKey
	targets []string // see targetsOf
}

// call returns the facts of the tool call at step i, computing them on
// first use.
func (f *facts) call(i int) *callFacts {
	if c, ok := f.calls[i]; ok {
		return c
	}
	if f.calls == nil {
		f.calls = map[int]*callFacts{}
	}
	s := &f.t.Steps[i]
	// Only the top level is decoded: the values stay raw until a field is
	// needed, so that long scripts and patches are not unquoted for nothing.
	c := &callFacts{Call: toolcall.Decode(s.Args)}
	c.targets = targetsOf(c.Args)
	c.key, c.nearKey = requestKeys(s.Tool, s.Args, c.Args, c.Command)
	f.calls[i] = c
	return c
}

// command returns what a tool call runs, as one string: the script of a
// shell call (unwrapped from `bash -lc`), the code of a code tool, the body
// of a patch, or the arguments verbatim when they have none of these.
func (f *facts) command(call int) string { return f.call(call).Command }

// shortTool drops an MCP-style "mcp__server__" prefix from a tool name.
func shortTool(name string) string {
	if i := strings.LastIndex(name, "__"); i >= 0 && i+2 < len(name) {
		return name[i+2:]
	}
	return name
}

// toolVocabulary is the set of tool names (full and short) the run called:
// the names its reasoning can refer to.
func (f *facts) toolVocabulary() map[string]bool {
	if f.vocab == nil {
		f.vocab = map[string]bool{}
		for i := range f.t.Steps {
			s := &f.t.Steps[i]
			if s.Kind == trace.KindToolCall && s.Tool != "" {
				f.vocab[s.Tool] = true
				f.vocab[shortTool(s.Tool)] = true
			}
		}
	}
	return f.vocab
}

// planTools are the tools agents use to keep a step-by-step plan rather than
// to act (Codex's update_plan, Claude Code's TodoWrite and its kin).
var planTools = map[string]bool{"update_plan": true, "todowrite": true, "todo_write": true, "write_todos": true}

func isPlanTool(name string) bool { return planTools[strings.ToLower(shortTool(name))] }

// planItem is one step of a plan, as the agent wrote it.
type planItem struct {
	Text   string
	Status string // lower case: pending, in_progress, completed …
}

// planUpdate is one call of a plan tool.
type planUpdate struct {
	Step        int
	Explanation string
	Items       []planItem
}

// planUpdates returns the run's plan updates in order. Plans are read from
// the first array of objects in the arguments (update_plan's "plan",
// TodoWrite's "todos"), each item's text from its step, content, title or
// description field.
func (f *facts) planUpdates() []planUpdate {
	if f.plansOK {
		return f.plans
	}
	f.plansOK = true
	for i := range f.t.Steps {
		s := &f.t.Steps[i]
		if s.Kind != trace.KindToolCall || !isPlanTool(s.Tool) {
			continue
		}
		type item struct{ Step, Content, Title, Description, Status string }
		var raw struct {
			Explanation               string
			Plan, Todos, Steps, Items []item
		}
		if json.Unmarshal([]byte(s.Args), &raw) != nil {
			// A field of another type: keep the update, without its plan.
			f.plans = append(f.plans, planUpdate{Step: i})
			continue
		}
		u := planUpdate{Step: i, Explanation: raw.Explanation}
		for _, items := range [][]item{raw.Plan, raw.Todos, raw.Steps, raw.Items} {
			if len(items) == 0 {
				continue
			}
			for _, it := range items {
				text := it.Step
				for _, alt := range []string{it.Content, it.Title, it.Description} {
					if text == "" {
						text = alt
					}
				}
				u.Items = append(u.Items, planItem{Text: text, Status: strings.ToLower(it.Status)})
			}
			break
		}
		f.plans = append(f.plans, u)
	}
	return f.plans
}

// callKey identifies what a call asks for: a hash of its tool and its
// arguments, normalised (see requestKeys), so that the same request spelled
// differently has the same key.
func (f *facts) callKey(call int) uint64 { return f.call(call).key }

// nearKey is callKey with every run of digits in the arguments read as one
// digit: calls that differ only in numbers (a limit, a line count) share it.
func (f *facts) nearKey(call int) uint64 { return f.call(call).nearKey }

// ignoredArgs are argument keys that change how a call runs, not what it
// returns.
var ignoredArgs = map[string]bool{"timeout": true, "timeout_ms": true, "justification": true, "with_escalated_permissions": true}

// requestKeys hashes a call's normalised request, exactly and with digits
// masked. A shell call is reduced to its script; the top-level keys of JSON
// arguments are sorted and their values compacted; runs of whitespace count
// as one space. Hashing the pieces as they stream spares building a
// normalised copy of every script and patch.
func requestKeys(tool, raw string, args map[string]json.RawMessage, command string) (exact, near uint64) {
	var k keyWriter
	k.exact.SetSeed(outputSeed)
	k.near.SetSeed(outputSeed)
	k.write(tool)
	k.write("\x00")
	if args == nil {
		k.write(raw)
		return k.exact.Sum64(), k.near.Sum64()
	}
	keys := make([]string, 0, len(args))
	for key := range args {
		if !ignoredArgs[key] {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	for _, key := range keys {
		k.write(key)
		k.write(":")
		if key == "command" {
			k.write(command)
		} else {
			k.writeCompact(string(args[key]))
		}
		k.write(",")
	}
	return k.exact.Sum64(), k.near.Sum64()
}

// keyWriter feeds text to two hashes, collapsing runs of whitespace in both
// and runs of digits in the second.
type keyWriter struct {
	exact, near      maphash.Hash
	inSpace, inDigit bool
}

func (k *keyWriter) write(s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			if !k.inSpace {
				k.exact.WriteByte(' ')
				k.near.WriteByte(' ')
			}
			k.inSpace, k.inDigit = true, false
		case c >= '0' && c <= '9':
			k.exact.WriteByte(c)
			if !k.inDigit {
				k.near.WriteByte('#')
			}
			k.inSpace, k.inDigit = false, true
		default:
			k.exact.WriteByte(c)
			k.near.WriteByte(c)
			k.inSpace, k.inDigit = false, false
		}
	}
}

// writeCompact writes a JSON value as json.Compact gives it, the spaces
// between its tokens dropped, without making the compacted copy (json.Compact
// was 4% of the detectors' time on many small runs). The values come from a
// decoded object, so they are valid JSON and a string's quotes and escapes
// are all there is to follow.
func (k *keyWriter) writeCompact(v string) {
	inString, escaped, from := false, false, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case escaped:
			escaped = false
		case inString:
			escaped, inString = c == '\\', c != '"'
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			k.write(v[from:i])
			from = i + 1
		}
	}
	k.write(v[from:])
}

var outputSeed = maphash.MakeSeed()

// outputKey is a hash of a call's result text with runs of whitespace
// collapsed and the ends trimmed, for telling whether two results are the
// same. Detectors ask for it only for calls whose requests repeat, so long
// outputs of calls that are never compared are never hashed.
func (f *facts) outputKey(call int) uint64 {
	if k, ok := f.outKeys[call]; ok {
		return k
	}
	if f.outKeys == nil {
		f.outKeys = map[int]uint64{}
	}
	k := spaceInsensitiveHash(f.output(call))
	f.outKeys[call] = k
	return k
}

// spaceInsensitiveHash hashes the words of s, so that texts differing only
// in whitespace hash alike, without building the collapsed copy.
func spaceInsensitiveHash(s string) uint64 {
	var h maphash.Hash
	h.SetSeed(outputSeed)
	start := -1
	for i := 0; i <= len(s); i++ {
		space := i == len(s) || s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r' || s[i] == '\v' || s[i] == '\f'
		switch {
		case space && start >= 0:
			h.WriteString(s[start:i])
			h.WriteByte(' ')
			start = -1
		case !space && start < 0:
			start = i
		}
	}
	return h.Sum64()
}

// sentences splits text into sentences, keeping each verbatim, so that a
// sentence can be quoted from the step it came from.
func sentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		if !sentenceEnds(text, i) {
			continue
		}
		if s := strings.TrimSpace(text[start : i+1]); s != "" {
			out = append(out, s)
		}
		start = i + 1
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// sentenceEnds says whether a sentence ends at byte i of text: a line
// break, or a full stop, question or exclamation mark before a space, a
// line break or the end.
func sentenceEnds(text string, i int) bool {
	c := text[i]
	return c == '\n' || ((c == '.' || c == '!' || c == '?') && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n'))
}

// sentenceAt returns the sentence of text (as sentences splits it) that
// holds byte offset at.
func sentenceAt(text string, at int) string {
	start := 0
	for i := 0; i < len(text); i++ {
		if !sentenceEnds(text, i) {
			continue
		}
		if i >= at {
			return strings.TrimSpace(text[start : i+1])
		}
		start = i + 1
	}
	return strings.TrimSpace(text[start:])
}

// agentText returns what the agent said in a step, for the detectors that
// read its stated intentions: a message's or reasoning's text, or the
// explanation of a plan update.
func (f *facts) agentText(i int) string {
	s := &f.t.Steps[i]
	if !trace.ByAgent(s) {
		return ""
	}
	if s.Kind == trace.KindToolCall {
		if !isPlanTool(s.Tool) {
			return ""
		}
		for _, u := range f.planUpdates() {
			if u.Step == i {
				return u.Explanation
			}
		}
		return ""
	}
	return s.Text
}

// absolutePaths lists the absolute paths a text mentions: a "/" at the start
// or after a delimiter (space, quote, =, (, [, comma), followed by a path
// character, up to the next character that cannot be in a path here, with
// trailing punctuation trimmed. URLs are not paths: the "//" of "https://"
// follows a colon, which is not a delimiter.
func absolutePaths(text string) []string {
	var out []string
	for i := 0; i < len(text); i++ {
		next := strings.IndexByte(text[i:], '/')
		if next < 0 {
			break
		}
		i += next
		if (i > 0 && !pathDelimiters[text[i-1]]) || i+1 == len(text) || !isPathStart(text[i+1]) {
			continue
		}
		j := i + 1
		for j < len(text) && !pathEnds[text[j]] {
			j++
		}
		if p := strings.TrimRight(text[i:j], ".:/`"); p != "" {
			out = append(out, p)
		}
		i = j
	}
	return out
}

// The bytes a path may follow, and those that end one (see absolutePaths),
// as tables: the prompts and arguments read for paths run to kilobytes.
var (
	pathDelimiters = byteSet(" \t\n\r'\"=([,")
	pathEnds       = byteSet(" \t\n\r'\"\\,;|&)<>*")
)

func byteSet(chars string) (set [256]bool) {
	for i := range len(chars) {
		set[chars[i]] = true
	}
	return set
}

func isPathStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._@%+~-", c) >= 0
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	dir = strings.TrimRight(dir, "/")
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// quotable returns the first candidate that the driver will accept as a
// quote of the given steps, or "" when none is.
func quotable(t *trace.Trace, steps []int, candidates ...string) string {
	for _, c := range candidates {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		f := trace.Finding{Steps: steps, Quote: c}
		if f.CheckEvidence(t) == nil {
			return c
		}
	}
	return ""
}

// quietSystemTypes are system steps that carry context, not events.
var quietSystemTypes = map[string]bool{"instructions": true, "environment_context": true, "compacted": true, "ghost_snapshot": true}

// harnessReport returns the text in which a step reports a problem of the
// run's machinery, for the detectors of infrastructure failures and caps:
// run-level errors, harness and system events, harness messages other than
// retry nudges, and failed tool results. Long texts are cut to their first
// line (events) or first 512 bytes (tool output, where a tool or server
// says what went wrong first), so that data a harness logs or a tool returns
// in bulk is not read as an event of the run.
func harnessReport(s *trace.Step) (string, bool) {
	text := strings.TrimSpace(s.Text)
	switch {
	case s.Kind == trace.KindError && s.Type != "turn_aborted":
	case s.Kind == trace.KindSystem && !quietSystemTypes[s.Type]:
	case s.Kind == trace.KindMessage && (s.Role == trace.RoleHarness || s.Role == trace.RoleSystem) && s.Type != trace.TypeRetryNudge:
	case s.Kind == trace.KindToolResult && (s.IsError || (s.ExitCode != nil && *s.ExitCode != 0)):
		return quoteFrom(text, 512), text != ""
	default:
		return "", false
	}
	if len(text) > 500 {
		text, _, _ = strings.Cut(text, "\n")
		text = quoteFrom(text, 500)
	}
	return text, text != ""
}

// toolMention matches a snake_case name right after a word that introduces a
// tool ("with get_trace_error_tree", "use `log_analysis`", "ask get_metric_anomalies"): a tool named in
// words, whether or not the run ever calls it.
var toolMention = text.Regexp("(?i)\\b(?:with|using|use|via|run|call|calling|running|ask|asking|query|querying)\\s+`?([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\\b`?(?:[^.\\w]|\\.\\s|\\.$|$)")

// toolsNamed returns the tools a text names: the run's own tools (names of
// four characters or more, so that "ls" in prose is not a call of it) and
// snake_case names introduced as tools.
func toolsNamed(text string, vocab map[string]bool) map[string]bool {
	tools := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		if vocab[w] && len(w) > 3 {
			tools[w] = true
		}
	}
	if strings.Contains(text, "_") { // a snake_case name needs one
		for _, m := range toolMention().FindAllStringSubmatch(text, -1) {
			tools[m[1]] = true
		}
	}
	return tools
}

// isEntity reports whether a word names an entity of the run: one that some
// call names in its entity arguments, or a hyphenated name ("valkey-cart")
// that a tool output gives as the last part of a path ("…/Service/valkey-cart").
// Plain words are not looked up in the outputs: every English word of a
// sentence would cost a scan of them all.
func (f *facts) isEntity(word string) bool {
	if f.entities == nil {
		f.entities = map[string]bool{}
		for i := range f.t.Steps {
			if s := &f.t.Steps[i]; s.Kind == trace.KindToolCall {
				for _, target := range f.call(i).targets {
					f.entities[target] = true
				}
			}
		}
	}
	known, ok := f.entities[word]
	if ok || !strings.Contains(word, "-") {
		return known
	}
	for i := range f.t.Steps {
		s := &f.t.Steps[i]
		if s.Kind == trace.KindToolResult && (strings.Contains(s.Text, "/"+word+`"`) || strings.Contains(s.Text, "/"+word+"\n")) {
			known = true
			break
		}
	}
	f.entities[word] = known
	return known
}

// harnessText is a step's harness report (see harnessReport), with a lower
// case copy for cheap word tests before a regular expression runs.
type harnessText struct {
	step        int
	text, lower string
}

// harnessReports returns the harness reports of the run, in step order.
func (f *facts) harnessReports() []harnessText {
	if !f.reported {
		f.reported = true
		for i := range f.t.Steps {
			if text, ok := harnessReport(&f.t.Steps[i]); ok {
				f.reports = append(f.reports, harnessText{i, text, strings.ToLower(text)})
			}
		}
	}
	return f.reports
}
