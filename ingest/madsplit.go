package ingest

import (
	"encoding/json"
	"strings"

	"github.com/faultline/faultline/ingest/internal/jsontext"
	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// A MAD trajectory is whatever the framework under study wrote: a JSON
// document for AG2 and HyperAgent runs, a log for the others. Splitting
// turns it into steps at the framework's speaker markers. Everything between
// two markers belongs to the step the first one opens; the only text
// dropped is the marker itself (a text after it on its line stays) and
// whitespace. Where no framework's markers are found, the trajectory stays
// one message step: a guessed split would invent speakers.

// madSplit is what splitting a trajectory found.
type madSplit struct {
	framework  string // the framework whose markers were recognised; "" when none were
	task       string
	instanceID string // the benchmark instance, from JSON trajectories
	note       string // the annotators' free-text note, from JSON trajectories
	steps      []trace.Step
}

// splitMADTrajectory splits a trajectory given as a JSON value: a string
// (the log, or a JSON document in a string), a document object, or a list
// of messages or log lines. hints are the record's mas_name and
// benchmark_name, which say which framework to try first.
func splitMADTrajectory(raw json.RawMessage, hints ...string) madSplit {
	var text string
	if json.Unmarshal(raw, &text) != nil {
		return splitMADDocument(raw, hints)
	}
	trimmed := strings.TrimSpace(text)
	if strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[") {
		if doc := sanitizeJSON([]byte(trimmed)); json.Valid(doc) {
			return splitMADDocument(doc, hints)
		}
	}
	return splitMADText(text, hints)
}

// madDocument is a trajectory stored as JSON: AG2 and HyperAgent write
// {instance_id, problem_statement, trajectory, note}; MetaGPT runs
// {prompt, content}.
type madDocument struct {
	InstanceID       json.RawMessage `json:"instance_id"`
	ProblemStatement json.RawMessage `json:"problem_statement"`
	Prompt           json.RawMessage `json:"prompt"`
	Trajectory       json.RawMessage `json:"trajectory"`
	Content          json.RawMessage `json:"content"`
	Note             json.RawMessage `json:"note"` // {text, options} in the human file
}

func splitMADDocument(raw json.RawMessage, hints []string) madSplit {
	var doc madDocument
	switch FirstByte(raw) {
	case '[':
		doc.Trajectory = raw
	case '{':
		_ = json.Unmarshal(raw, &doc) // raw is valid JSON and every member is kept raw
	default:
		return splitMADText(string(raw), hints)
	}
	var s madSplit
	var messages []json.RawMessage
	if FirstByte(doc.Trajectory) == '[' && json.Unmarshal(doc.Trajectory, &messages) == nil {
		if lines, ok := jsontext.LooseText(doc.Trajectory); ok {
			s = splitMADText(lines, hints) // HyperAgent: one log line per element
		} else {
			s = madSplit{framework: "ag2", steps: madChatSteps(messages)}
		}
	} else {
		// The document parsed, so its strings decode.
		var log string
		switch {
		case FirstByte(doc.Trajectory) == '"':
			_ = json.Unmarshal(doc.Trajectory, &log)
		case FirstByte(doc.Content) == '"':
			_ = json.Unmarshal(doc.Content, &log)
		default:
			log = string(raw)
		}
		s = splitMADText(log, hints)
	}
	if task, ok := jsontext.LooseText(doc.ProblemStatement); ok && strings.TrimSpace(task) != "" {
		s.task = strings.TrimSpace(task)
	} else if task, ok := jsontext.LooseText(doc.Prompt); ok && strings.TrimSpace(task) != "" {
		s.task = strings.TrimSpace(task)
	}
	s.instanceID, _ = jsontext.LooseText(doc.InstanceID)
	var note struct {
		Text json.RawMessage `json:"text"`
	}
	if FirstByte(doc.Note) == '{' && json.Unmarshal(doc.Note, &note) == nil {
		doc.Note = note.Text
	}
	if text, ok := jsontext.LooseText(doc.Note); ok {
		s.note = strings.TrimSpace(text)
	}
	return s
}

// madChatSteps turns a list of chat messages, {content, role, name} as AG2
// logs them, into message steps. AG2 records each message's role as seen
// by the agent that kept the history, not by its sender (in the human file
// the proxy speaks as "assistant" and the solver as "user"; in the AG2
// samples every agent is "user"), so the role is kept only for messages
// that name no speaker, where it is the speaker's own.
func madChatSteps(messages []json.RawMessage) []trace.Step {
	steps := make([]trace.Step, 0, len(messages))
	for _, raw := range messages {
		var m struct {
			Content json.RawMessage `json:"content"`
			Role    json.RawMessage `json:"role"`
			Name    json.RawMessage `json:"name"`
		}
		if json.Unmarshal(raw, &m) != nil {
			// Not an object: keep the element itself as the message.
			text, ok := jsontext.LooseText(raw)
			if !ok {
				text = jsontext.Compact(raw)
			}
			steps = append(steps, trace.Step{Kind: trace.KindMessage, Text: tidyText(text)})
			continue
		}
		step := trace.Step{Kind: trace.KindMessage, Text: tidyText(chatContent(m.Content))}
		step.Agent, _ = jsontext.LooseText(m.Name)
		if step.Agent == "" {
			step.Role, _ = jsontext.LooseText(m.Role)
		}
		if step.Text != "" || step.Agent != "" || step.Role != "" {
			steps = append(steps, step)
		}
	}
	return steps
}

// chatContent reads message content: a string, a list of lines, a list of
// {type, text} parts, or anything else kept as compact JSON.
func chatContent(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if s, ok := jsontext.LooseText(raw); ok {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		texts := make([]string, 0, len(parts))
		for _, p := range parts {
			texts = append(texts, p.Text)
		}
		return strings.Join(texts, "\n")
	}
	return jsontext.Compact(raw)
}

// madMarker is a line that opens a step.
type madMarker struct {
	step trace.Step // kind, role, agent, tool and type of the step it opens
	text string     // the part of the line that belongs to the step's text
	args bool       // the step's body is tool-call arguments (Step.Args), not Step.Text
}

// madLog recognises one framework's markers. It sees every line in order,
// so it may keep state (the roles of the current ChatDev phase, say).
type madLog interface {
	// mark reports whether line opens a step.
	mark(line string) (madMarker, bool)
	// finish names the framework and the task, and may refine the steps
	// once all are known.
	finish(steps []trace.Step) (framework, task string)
}

// madLogFormat is one framework's log, with the mas_name or benchmark_name
// values (normalised by madHint) that say a trajectory is probably in it.
type madLogFormat struct {
	hints []string
	new   func() madLog
}

// madLogFormats lists the log splitters. When no hint applies, the one that
// recognises the most markers wins, so the order only breaks ties.
var madLogFormats = []madLogFormat{
	{[]string{"hyperagent"}, func() madLog { return &hyperAgentLog{} }},
	{[]string{"chatdev"}, func() madLog { return &chatDevLog{} }},
	{[]string{"metagpt", "openmanus"}, func() madLog { return &loguruLog{} }},
	{[]string{"metagpt"}, func() madLog { return &metaGPTLog{} }},
	{[]string{"magentic", "magenticone"}, func() madLog { return &magenticLog{} }},
	{[]string{"appworld"}, func() madLog { return &appWorldLog{} }},
}

// madHint normalises a framework name: "Magentic-One" → "magenticone".
func madHint(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// splitMADText splits a log. A framework named by a hint is taken as soon
// as any of its markers is found; otherwise every splitter runs (each once
// over the text, so the cost stays linear) and the one with the most
// markers wins. The MAD human file labels some GAIA runs with the benchmark
// in mas_name and the framework in benchmark_name, so both are hints.
func splitMADText(text string, hints []string) madSplit {
	hinted := map[string]bool{}
	for _, h := range hints {
		hinted[madHint(h)] = true
	}
	var first, rest []madLogFormat
	for _, f := range madLogFormats {
		named := false
		for _, h := range f.hints {
			named = named || hinted[h]
		}
		if named {
			first = append(first, f)
		} else {
			rest = append(rest, f)
		}
	}
	var best madSplit
	bestMarkers := 0
	for i, f := range append(first, rest...) {
		log := f.new()
		steps, markers := splitLog(text, log)
		if markers > bestMarkers {
			framework, task := log.finish(steps)
			best, bestMarkers = madSplit{framework: framework, task: task, steps: steps}, markers
		}
		if i < len(first) && markers > 0 {
			return best
		}
	}
	if bestMarkers > 0 {
		return best
	}
	var s madSplit
	if t := tidyText(text); t != "" {
		s.steps = []trace.Step{{Kind: trace.KindMessage, Text: t}}
	}
	return s
}

// splitLog cuts text at the lines log recognises as markers and returns
// the steps and the number of markers. Lines before the first marker (a
// harness's setup output) become a system step.
func splitLog(text string, log madLog) ([]trace.Step, int) {
	var steps []trace.Step
	markers := 0
	cur, curArgs := harnessStep(), false
	var body []string
	flush := func() {
		t := tidyLines(body)
		if curArgs {
			cur.Args = t
		} else {
			cur.Text = t
		}
		// An empty step says something only when a speaker or tool took it.
		if t != "" || cur.Agent != "" || cur.Tool != "" {
			steps = append(steps, cur)
		}
	}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		m, ok := log.mark(line)
		if !ok {
			body = append(body, line)
			continue
		}
		markers++
		flush()
		cur, curArgs, body = m.step, m.args, body[:0]
		if m.text != "" {
			body = append(body, m.text)
		}
	}
	flush()
	return steps, markers
}

// tidyText trims a step's text like tidyLines does.
func tidyText(s string) string {
	return tidyLines(strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n"))
}

// tidyLines joins lines into a step's text without the indentation they
// share (logs indent nested messages), trailing spaces, and blank lines at
// either end.
func tidyLines(lines []string) string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " "))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		l = strings.TrimRight(l, " \t\r")
		if len(l) >= indent && indent > 0 {
			l = l[indent:]
		}
		b.WriteString(l)
	}
	return b.String()
}

// harnessStep is a system step for framework bookkeeping.
func harnessStep() trace.Step {
	return trace.Step{Kind: trace.KindSystem, Role: trace.RoleHarness}
}

// isErrorLevel reports log levels that mark a failure.
func isErrorLevel(level string) bool {
	return level == "ERROR" || level == "CRITICAL"
}

// HyperAgent logs through Python logging, one record per list element:
// "HyperAgent_<instance> - INFO - Planner's Response: ...". Agents speak in
// "<Agent>'s Response:" records (the inner assistants of the Navigator,
// Editor and Executor too) and hand results back in "<From>-><To>:" records.
// The planner delegates inside its response, from an "Intern Name: ..."
// line on (the intern, then its subgoal); that part is a message of its own.
type hyperAgentLog struct {
	agent string // the speaker of the current record
}

var (
	hyperAgentLine     = text.Regexp(`^\s*HyperAgent_\S* - ([A-Z]+) - (.*)$`)
	hyperAgentResponse = text.Regexp(`^([A-Za-z][\w-]*)'s Response:\s?(.*)$`)
	hyperAgentHandoff  = text.Regexp(`^([A-Za-z][\w-]*)->([A-Za-z][\w-]*):\s?(.*)$`)
)

func (l *hyperAgentLog) mark(line string) (madMarker, bool) {
	if strings.HasPrefix(line, "Intern Name:") && l.agent != "" {
		return madMarker{step: trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant, Agent: l.agent}, text: line}, true
	}
	if !strings.Contains(line, "HyperAgent_") {
		return madMarker{}, false
	}
	m := hyperAgentLine().FindStringSubmatch(line)
	if m == nil {
		return madMarker{}, false
	}
	level, msg := m[1], m[2]
	if r := hyperAgentResponse().FindStringSubmatch(msg); r != nil {
		l.agent = r[1]
		return madMarker{step: trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant, Agent: r[1]}, text: r[2]}, true
	}
	if r := hyperAgentHandoff().FindStringSubmatch(msg); r != nil {
		l.agent = r[1]
		return madMarker{step: trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant, Agent: r[1]}, text: r[3]}, true
	}
	l.agent = ""
	step := harnessStep()
	step.IsError = isErrorLevel(level)
	return madMarker{step: step, text: msg}, true
}

func (*hyperAgentLog) finish([]trace.Step) (string, string) { return "hyperagent", "" }

// ChatDev logs "[2025-17-01 11:36:43 INFO] <speaker>: <text>" records: the
// agents by role name ("Chief Product Officer: **...**"), the harness as
// "System:" and as bracketed headings ("**[Seminar Conclusion]**:"). Each
// phase first logs a table naming its assistant and user roles, from which
// a speaker's role in the conversation is known.
type chatDevLog struct {
	assistant, user string
}

var (
	chatDevLine    = text.Regexp(`^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ([A-Z]+)\] (.*)$`)
	chatDevHeading = text.Regexp(`^\*\*\[([^\]]+)\]\*\*:?\s*(.*)$`)
	chatDevSpeaker = text.Regexp(`^([A-Z][\w .'-]*?): (.*)$`)
	chatDevRole    = text.Regexp(`^\| \*\*(assistant|user)_role_name\*\* \| (.+?) \|$`)
)

// chatDevNoise is logged between every two records when ChatDev's web
// visualiser is not running; it says nothing about the run.
const chatDevNoise = "flask app.py did not start for online log"

func (l *chatDevLog) mark(line string) (madMarker, bool) {
	if !strings.HasPrefix(line, "[") {
		if strings.HasPrefix(line, "| **") {
			if r := chatDevRole().FindStringSubmatch(line); r != nil {
				if r[1] == "assistant" {
					l.assistant = r[2]
				} else {
					l.user = r[2]
				}
			}
		}
		return madMarker{}, false
	}
	m := chatDevLine().FindStringSubmatch(line)
	if m == nil {
		return madMarker{}, false
	}
	level, msg := m[1], m[2]
	step := harnessStep()
	step.IsError = isErrorLevel(level)
	switch {
	case msg == chatDevNoise:
		return madMarker{step: step}, true
	case strings.HasPrefix(msg, "**["):
		if h := chatDevHeading().FindStringSubmatch(msg); h != nil {
			step.Type = h[1]
			return madMarker{step: step, text: h[2]}, true
		}
	case strings.HasPrefix(msg, "System: "):
		rest := strings.TrimPrefix(msg, "System: ")
		if h := chatDevHeading().FindStringSubmatch(rest); h != nil {
			step.Type, rest = h[1], h[2]
		}
		return madMarker{step: step, text: rest}, true
	case strings.HasPrefix(msg, "HTTP Request: "):
		return madMarker{step: step, text: msg}, true
	}
	if s := chatDevSpeaker().FindStringSubmatch(msg); s != nil && !strings.Contains(s[1], "**") {
		step := trace.Step{Kind: trace.KindMessage, Agent: s[1]}
		switch s[1] {
		case l.assistant:
			step.Role = trace.RoleAssistant
		case l.user:
			step.Role = trace.RoleUser
		}
		return madMarker{step: step, text: s[2]}, true
	}
	return madMarker{step: step, text: msg}, true
}

func (*chatDevLog) finish(steps []trace.Step) (string, string) {
	const key = "**task_prompt**:"
	for _, s := range steps {
		if _, after, ok := strings.Cut(s.Text, key); ok {
			task, _, _ := strings.Cut(after, "\n")
			return "chatdev", strings.TrimSpace(task)
		}
	}
	return "chatdev", ""
}

// MetaGPT (in its JSON run records) and OpenManus log through loguru:
// "2025-01-17 11:40:27.872 | INFO     | module:function:line - message".
// MetaGPT roles act as "Alice(SimpleCoder): ..."; OpenManus's agent thinks
// ("✨ Manus's thoughts: ..."), calls tools ("🔧 Tool arguments: ...") and
// gets results ("🎯 Tool 'x' completed its mission! Result: ..."); the rest
// is bookkeeping.
type loguruLog struct {
	framework string
	agent     string   // the agent whose thoughts came last
	tools     []string // the tools it announced for its next call
}

var (
	loguruLine     = text.Regexp(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \| ([A-Z]+) *\| \S+ - (.*)$`)
	metaGPTRole    = text.Regexp(`^([A-Za-z][\w ]*?)\(([A-Za-z][\w ]*?)\): (.*)$`)
	manusThoughts  = text.Regexp(`^✨ (.+?)'s thoughts:\s?(.*)$`)
	manusPrepared  = text.Regexp(`^🧰 Tools being prepared: \[(.*)\]$`)
	manusArguments = text.Regexp(`^🔧 Tool arguments:\s?(.*)$`)
	manusResult    = text.Regexp(`^🎯 Tool '([^']*)' completed its mission! Result:\s?(.*)$`)
)

func (l *loguruLog) mark(line string) (madMarker, bool) {
	if len(line) < 24 || line[4] != '-' || line[10] != ' ' {
		return madMarker{}, false
	}
	m := loguruLine().FindStringSubmatch(line)
	if m == nil {
		return madMarker{}, false
	}
	level, msg := m[1], m[2]
	if r := metaGPTRole().FindStringSubmatch(msg); r != nil {
		l.framework = "metagpt"
		return madMarker{step: trace.Step{Kind: trace.KindMessage, Agent: r[1], Role: r[2]}, text: r[3]}, true
	}
	if r := manusThoughts().FindStringSubmatch(msg); r != nil {
		l.framework, l.agent = "openmanus", r[1]
		return madMarker{step: trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant, Agent: r[1]}, text: r[2]}, true
	}
	if r := manusArguments().FindStringSubmatch(msg); r != nil {
		step := trace.Step{Kind: trace.KindToolCall, Role: trace.RoleAssistant, Agent: l.agent}
		if len(l.tools) == 1 {
			step.Tool = l.tools[0]
		}
		return madMarker{step: step, text: r[1], args: true}, true
	}
	if r := manusResult().FindStringSubmatch(msg); r != nil {
		return madMarker{step: trace.Step{Kind: trace.KindToolResult, Role: trace.RoleTool, Tool: r[1]}, text: r[2]}, true
	}
	if r := manusPrepared().FindStringSubmatch(msg); r != nil {
		l.tools = l.tools[:0]
		for _, name := range strings.Split(r[1], ",") {
			if name = strings.Trim(strings.TrimSpace(name), `'"`); name != "" {
				l.tools = append(l.tools, name)
			}
		}
	}
	step := harnessStep()
	step.IsError = isErrorLevel(level)
	return madMarker{step: step, text: msg}, true
}

func (l *loguruLog) finish([]trace.Step) (string, string) {
	if l.framework == "" {
		return "loguru", ""
	}
	return l.framework, ""
}

// MetaGPT's communication log (the MMLU runs) frames each message:
// "[2025-03-27 01:21:03] FROM: Human TO: {...}" with ACTION and CONTENT
// lines, or "[...] NEW MESSAGES:" followed by "SimpleCoder: ..." blocks,
// each closed by a line of dashes.
type metaGPTLog struct {
	inNew         bool // inside a NEW MESSAGES block
	expectSpeaker bool // the next non-blank line names a speaker
}

var (
	metaGPTFrom    = text.Regexp(`^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] FROM: (.+?) TO: .*$`)
	metaGPTNew     = text.Regexp(`^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] NEW MESSAGES:\s*$`)
	metaGPTSpeaker = text.Regexp(`^([A-Za-z][\w .-]*?):\s?(.*)$`)
	metaGPTBanner  = text.Regexp(`^=== (.*?) ===$`)
	metaGPTRule    = text.Regexp(`^-{20,}$`)
)

func (l *metaGPTLog) mark(line string) (madMarker, bool) {
	switch {
	case strings.HasPrefix(line, "["):
		if m := metaGPTFrom().FindStringSubmatch(line); m != nil {
			l.inNew, l.expectSpeaker = false, false
			step := trace.Step{Kind: trace.KindMessage, Agent: m[1]}
			if m[1] == "Human" {
				step.Agent, step.Role = "", trace.RoleUser
			}
			return madMarker{step: step}, true
		}
		if metaGPTNew().MatchString(line) {
			l.inNew, l.expectSpeaker = true, true
			return madMarker{step: harnessStep()}, true
		}
	case strings.HasPrefix(line, "---"):
		if metaGPTRule().MatchString(line) {
			l.expectSpeaker = l.inNew
			return madMarker{step: harnessStep()}, true
		}
	case strings.HasPrefix(line, "=== "):
		if m := metaGPTBanner().FindStringSubmatch(line); m != nil {
			l.inNew, l.expectSpeaker = false, false
			return madMarker{step: harnessStep(), text: m[1]}, true
		}
	}
	if l.expectSpeaker && strings.TrimSpace(line) != "" {
		l.expectSpeaker = false
		if m := metaGPTSpeaker().FindStringSubmatch(line); m != nil {
			return madMarker{step: trace.Step{Kind: trace.KindMessage, Agent: m[1]}, text: m[2]}, true
		}
	}
	return madMarker{}, false
}

func (*metaGPTLog) finish(steps []trace.Step) (string, string) {
	for _, s := range steps {
		if s.Role == trace.RoleUser {
			if _, content, ok := strings.Cut(s.Text, "CONTENT:\n"); ok {
				return "metagpt", strings.TrimSpace(content)
			}
			return "metagpt", s.Text
		}
	}
	return "metagpt", ""
}

// Magentic-One's console prints "---------- WebSurfer ----------" (newer
// versions "---------- TextMessage (WebSurfer) ----------") before each
// message; the test bed wraps the run in "SCENARIO.PY STARTING !#!#" lines.
type magenticLog struct{}

var (
	magenticHeader  = text.Regexp(`^-{4,} (.+?) -{4,}$`)
	magenticMsgType = text.Regexp(`^\w+ \((.+)\)$`)
)

func (*magenticLog) mark(line string) (madMarker, bool) {
	switch {
	case strings.HasPrefix(line, "----"):
		m := magenticHeader().FindStringSubmatch(line)
		if m == nil {
			return madMarker{}, false
		}
		name := m[1]
		if t := magenticMsgType().FindStringSubmatch(name); t != nil {
			name = t[1]
		}
		if name == "user" {
			return madMarker{step: trace.Step{Kind: trace.KindMessage, Role: trace.RoleUser}}, true
		}
		return madMarker{step: trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant, Agent: name}}, true
	case strings.HasSuffix(line, " !#!#"):
		return madMarker{step: harnessStep(), text: line}, true
	}
	return madMarker{}, false
}

func (*magenticLog) finish(steps []trace.Step) (string, string) {
	task := ""
	for i := range steps {
		s := &steps[i]
		if task == "" && s.Role == trace.RoleUser {
			task = s.Text
		}
		if s.Agent != "" && strings.HasPrefix(s.Text, "FINAL ANSWER:") {
			s.Kind = trace.KindFinal
		}
	}
	return "magentic-one", task
}

// AppWorld's multi-agent runs print a task banner, then indented blocks under
// headings: "Response from Supervisor Agent" (the agent's code),
// "Code Execution Output", "Message to Spotify Agent" (what the app agent
// is told, by the supervisor or its own execution), "Reply from Spotify
// Agent to Supervisor", "Response from send_message API", the loop's
// "Entering/Exiting ... message loop", and a final "Evaluation".
type appWorldLog struct{}

var (
	appWorldTask     = text.Regexp(`^\*{5,} Task .* \*{5,}$`)
	appWorldResponse = text.Regexp(`^Response from (.+) Agent$`)
	appWorldMessage  = text.Regexp(`^Message to (.+) Agent$`)
	appWorldReply    = text.Regexp(`^Reply from (.+) Agent to (.+)$`)
	appWorldAPI      = text.Regexp(`^Response from (.+) API$`)
	appWorldLoop     = text.Regexp(`^(Entering|Exiting) .+ Agent message loop$`)
)

func (*appWorldLog) mark(line string) (madMarker, bool) {
	l := strings.TrimSpace(line)
	switch {
	case l == "Code Execution Output":
		return madMarker{step: trace.Step{Kind: trace.KindToolResult, Role: trace.RoleTool}}, true
	case l == "Evaluation":
		step := harnessStep()
		step.Type = "evaluation"
		return madMarker{step: step}, true
	case strings.HasPrefix(l, "*****"):
		if appWorldTask().MatchString(l) {
			return madMarker{step: trace.Step{Kind: trace.KindMessage, Role: trace.RoleUser}}, true
		}
	case strings.HasPrefix(l, "Response from "):
		if m := appWorldAPI().FindStringSubmatch(l); m != nil {
			return madMarker{step: trace.Step{Kind: trace.KindToolResult, Role: trace.RoleTool, Tool: m[1]}}, true
		}
		if m := appWorldResponse().FindStringSubmatch(l); m != nil {
			return madMarker{step: trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant, Agent: m[1]}}, true
		}
	case strings.HasPrefix(l, "Message to "):
		if appWorldMessage().MatchString(l) {
			return madMarker{step: trace.Step{Kind: trace.KindMessage, Role: trace.RoleUser}}, true
		}
	case strings.HasPrefix(l, "Reply from "):
		if m := appWorldReply().FindStringSubmatch(l); m != nil {
			return madMarker{step: trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant, Agent: m[1]}}, true
		}
	case strings.HasPrefix(l, "Entering ") || strings.HasPrefix(l, "Exiting "):
		if appWorldLoop().MatchString(l) {
			return madMarker{step: harnessStep(), text: l}, true
		}
	}
	return madMarker{}, false
}

func (*appWorldLog) finish(steps []trace.Step) (string, string) {
	for _, s := range steps {
		if s.Role == trace.RoleUser {
			return "appworld", s.Text
		}
	}
	return "appworld", ""
}
