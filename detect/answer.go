package detect

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

// answerFacts is what became of the output file the task requires (see
// taskSpec.Output): which calls wrote it, which validated it, whether it
// exists at the end, and its final content when the trace shows it whole.
type answerFacts struct {
	File        string
	Writes      []int // calls that write the file, in order
	Validations []int // calls that run the task's validator on it, in order
	// Exists is true when some step shows the file was there: a write, a read
	// or a validation of it succeeded, or the run directory holds it.
	Exists bool
	// Content is the final version of the file, when known: the file from the
	// run directory, or the last version a step showed whole (a complete
	// write, or a read that printed it) with no write after it.
	Content      string
	ContentKnown bool
	ContentStep  int // the step Content was seen at; -1 when it came from the run directory
}

// LastWrite returns the last call that wrote the file, or -1.
func (a *answerFacts) LastWrite() int {
	if len(a.Writes) == 0 {
		return -1
	}
	return a.Writes[len(a.Writes)-1]
}

// answerFile returns the facts about the task's output file, or nil when the
// task names none.
func (f *facts) answerFile() *answerFacts {
	if f.answer != nil || f.task().Output == "" {
		return f.answer
	}
	spec := f.task()
	a := &answerFacts{File: spec.Output, ContentStep: -1}
	f.answer = a
	t := f.t

	patterns := patternsFor(a.File)
	versionKnown := false
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Kind != trace.KindToolCall || isPlanTool(s.Tool) || !strings.Contains(s.Args, a.File) {
			continue
		}
		cmd := f.command(i)
		redirects := patterns.write.MatchString(cmd)
		// Writes the ingest layer recognises (patches, and heredocs and echoes
		// redirected into the file) carry the content written, when the call
		// shows it whole.
		var w ingest.FileWrite
		recognised := false
		if redirects || strings.Contains(cmd, "*** Begin Patch") {
			w, recognised = ingest.LastWrite(&trace.Trace{Steps: t.Steps[i : i+1]}, a.File)
		}
		content := w.Content
		if !w.Complete {
			content = "\x00"
		}
		isWrite := recognised || redirects
		isValidation := spec.Validator != "" && runsCommand(cmd, spec.Validator)
		ok := f.succeeded(i)
		if isWrite {
			a.Writes = append(a.Writes, i)
			if ok {
				a.Exists = true
				versionKnown = recognised && content != "\x00"
				a.Content, a.ContentStep = content, i
			}
		}
		if isValidation {
			a.Validations = append(a.Validations, i)
		}
		if !isWrite && ok && (isValidation || patterns.read.MatchString(cmd)) {
			a.Exists = true
			// A command that printed the whole file shows the version current
			// at that point.
			if out := strings.TrimSpace(f.output(i)); patterns.print.MatchString(cmd) && json.Valid([]byte(out)) {
				versionKnown = true
				a.Content, a.ContentStep = out, i
			}
		}
	}
	a.ContentKnown = versionKnown
	if !versionKnown {
		a.Content, a.ContentStep = "", -1
	}
	if t.Diagnosis != nil && t.Diagnosis.Body != "" {
		a.Exists, a.ContentKnown, a.Content, a.ContentStep = true, true, t.Diagnosis.Body, -1
	}
	return a
}

// validationOK reports whether a validation call passed.
func (f *facts) validationOK(call int) bool {
	return f.succeeded(call) && !strings.Contains(strings.ToLower(f.output(call)), "parse error")
}

// runsCommand reports whether a command line runs name as a command, not
// merely mentions it: name is followed by a separator or the end, and stands
// where a command stands (see commandPosition).
func runsCommand(cmd, name string) bool {
	for i := 0; ; {
		j := strings.Index(cmd[i:], name)
		if j < 0 {
			return false
		}
		at, end := i+j, i+j+len(name)
		if (end == len(cmd) || strings.IndexByte(" \t\n;&|)'\"", cmd[end]) >= 0) && commandPosition(cmd, at) {
			return true
		}
		i = end
	}
}

// commandWrappers are words that run the command after them.
var commandWrappers = []string{"sudo", "xargs", "env", "time", "nohup", "exec", "then", "do"}

// commandPosition reports whether offset at of a command line is where a
// command word starts: before it, past a path to it ("/usr/bin/jq") and
// spaces, comes the start of the line, a shell separator, the quote opening
// a "bash -c" script, or a wrapper such as sudo.
func commandPosition(cmd string, at int) bool {
	k := at
	if k > 0 && cmd[k-1] == '/' {
		for k > 0 && strings.IndexByte(" \t\n;&|(", cmd[k-1]) < 0 {
			k--
		}
	}
	for k > 0 && (cmd[k-1] == ' ' || cmd[k-1] == '\t') {
		k--
	}
	if k == 0 || strings.IndexByte(";&|(\n`{", cmd[k-1]) >= 0 {
		return true
	}
	// The script of "bash -c '…'" starts with a command too.
	if q := cmd[k-1]; q == '\'' || q == '"' {
		before := strings.TrimRight(cmd[:k-1], " \t")
		if strings.HasSuffix(before, "-c") || strings.HasSuffix(before, "-lc") {
			return true
		}
	}
	for _, w := range commandWrappers {
		if strings.HasSuffix(cmd[:k], w) && commandPosition(cmd, k-len(w)) {
			return true
		}
	}
	return false
}

var filePatterns struct {
	sync.Mutex
	byFile map[string]*filePattern
}

// filePattern recognises, in a command, what the patches and heredocs ingest
// recognises do not: the other ways to write a file (a redirection, tee,
// touch, a copy or move onto it, an in-place sed, a script opening it for
// writing), the commands that read it (cat, head, jq, ls, test -f …), which
// succeed only if it exists, and those that print it whole (cat, `jq .`,
// json.tool).
type filePattern struct {
	write, read, print *regexp.Regexp
}

func patternsFor(file string) *filePattern {
	filePatterns.Lock()
	defer filePatterns.Unlock()
	if p, ok := filePatterns.byFile[file]; ok {
		return p
	}
	f := regexp.QuoteMeta(file)
	path := `['"]?[^\s'"<>|;&]*` + f + `\b`
	p := &filePattern{
		write: regexp.MustCompile(`>>?\s*` + path +
			`|\btee\s+(?:-a\s+)?` + path +
			`|\b(?:touch|cp|mv|install)\s[^\n;&|]*` + f + `['"]?\s*(?:$|[;&|\n])` +
			`|\bsed\s+-i\b[^\n;&|]*` + f +
			`|\bopen\(\s*['"][^'"]*` + f + `['"]\s*,\s*['"][wa]`),
		read:  regexp.MustCompile(`(?:^|[\s;&|(])(?:cat|head|tail|less|wc|stat|ls|file|test\s+-[efs]|\[\s+-[efs]|jq|python3?\s+-m\s+json\.tool)\b[^\n;&|]*` + f),
		print: regexp.MustCompile(`(?:^|[\s;&|(])(?:cat|jq(?:\s+-[a-zA-Z]+)*\s+['"]?\.['"]?|python3?\s+-m\s+json\.tool)\s+` + path),
	}
	if filePatterns.byFile == nil {
		filePatterns.byFile = map[string]*filePattern{}
	}
	filePatterns.byFile[file] = p
	return p
}

// zeroSections decodes an answer in ITBench Zero's diagnosis schema
// (ingest.AnswerFile: entities, propagations, alerts_explained) into its
// top-level fields, kept raw so that a wrong type can be told from an absent
// field; nil when text is not a JSON object.
func zeroSections(text string) map[string]json.RawMessage {
	var top map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &top) != nil {
		return nil
	}
	return top
}

// objects decodes a raw field as a list of JSON objects; ok is false when it
// is absent or anything else.
func objects(raw json.RawMessage) (list []map[string]any, ok bool) {
	if raw == nil {
		return nil, false
	}
	return list, json.Unmarshal(raw, &list) == nil && list != nil
}

// diagnosisText returns the run's answer in Zero's schema when it has one:
// the final content of the answer file, or else a JSON object with an
// "entities" list in the agent's final message (runs that print the
// diagnosis instead of writing it). step is where it was seen (-1: the run
// directory).
func (f *facts) diagnosisText() (text string, step int, ok bool) {
	if f.task().Output == ingest.AnswerFile {
		if a := f.answerFile(); a.ContentKnown {
			return a.Content, a.ContentStep, true
		}
	}
	for i := len(f.t.Steps) - 1; i >= 0; i-- {
		s := &f.t.Steps[i]
		if s.Kind != trace.KindFinal {
			continue
		}
		open, end := strings.Index(s.Text, "{"), strings.LastIndex(s.Text, "}")
		if open < 0 || end < open {
			return "", 0, false
		}
		body := s.Text[open : end+1]
		if strings.Contains(body, `"entities"`) && json.Valid([]byte(body)) {
			return body, i, true
		}
		return "", 0, false
	}
	return "", 0, false
}

// contentSteps returns the steps that show the answer file's final content,
// for a finding about it to cite: the call that wrote it, or the call that
// printed it with its result (where the printed copy is); when the content came from the run
// directory, the last successful write; nil when there is none.
func (f *facts) contentSteps(a *answerFacts) []int {
	at := a.ContentStep
	if at < 0 {
		at = f.lastGoodWrite(a)
	}
	if at < 0 {
		return nil
	}
	if r := f.t.Steps[at].Pair; r != nil && !slices.Contains(a.Writes, at) {
		return []int{at, *r} // a read: the content is in its output
	}
	return []int{at}
}

// lastGoodWrite returns the last write of the answer file that succeeded, or -1.
func (f *facts) lastGoodWrite(a *answerFacts) int {
	for k := len(a.Writes) - 1; k >= 0; k-- {
		if f.succeeded(a.Writes[k]) {
			return a.Writes[k]
		}
	}
	return -1
}

// passedValidationAfter returns the first validation of the answer file at
// or after step from that passed, or -1.
func (f *facts) passedValidationAfter(a *answerFacts, from int) int {
	for _, v := range a.Validations {
		if v >= from && f.validationOK(v) {
			return v
		}
	}
	return -1
}
