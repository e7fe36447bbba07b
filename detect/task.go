package detect

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// taskSpec holds the machine-checkable requirements a task prompt states in
// words: the file the result must be written to, the command it must be
// validated with, the files it must not read, where its input data lies.
// Each requirement keeps the phrase it was read from, so that findings can
// quote the prompt.
//
// The prompt is read from Trace.Task and from the harness's standing
// instructions (system steps of type "instructions"). What the run must
// produce (output file, validator, data directories, working directory) is
// taken from Trace.Task when it says, since a run's own request overrides
// standing instructions (a remediation run asked to write
// agent_remediation.json under instructions that describe the diagnosis);
// prohibitions from either apply.
type taskSpec struct {
	Output          string // base name of the file the result must be written to
	OutputPhrase    string
	Validator       string // command the output must be checked with, e.g. "jq"
	ValidatorPhrase string
	Forbidden       []prohibition // files the task forbids reading
	Banned          []prohibition // commands and tools the task forbids running
	DataDirs        []string      // directories holding the task's input data
	DataFromTask    bool          // DataDirs come from Trace.Task, not from standing instructions
	WorkDir         string
	Mentioned       map[string]bool // every absolute path the prompt mentions
	// FinalJSONOnly is set when the task forbids any output but the JSON
	// answer ("NEVER output anything other than the final JSON"); the
	// phrase says so.
	FinalJSONOnly   bool
	FinalJSONPhrase string
	SentenceLimit   int      // most sentences allowed in the LimitedFields of the output
	LimitedFields   []string // JSON field names the limit applies to
	LimitPhrase     string
}

// prohibition is something the task forbids (a file to read, a command to
// run), with the words that say so.
type prohibition struct {
	Name   string
	Phrase string
}

// inSentence matches one character that does not end a sentence: prompts
// wrap lines mid-sentence, and a full stop inside a file name
// ("agent_output.json") is not an end.
const inSentence = `(?:[^.\n]|\.\S|\n[^\n])`

var (
	// "Write your diagnosis to: /path/agent_output.json", "Write your remediation plan to agent_remediation.json".
	outputRule = newWordRule("(?i)\\bwrite\\s+(?:your|the)\\s[^\\n]{0,60}?\\bto:?[\\s*_`]*([^\\s*`'\"]+\\.(?:json|ya?ml|md|txt|csv))\\b", "write")
	// "validate json using `jq`", "check that the file parses with jq".
	validatorRule = newWordRule("(?i)\\b(?:validat|check|verif)\\w*\\b"+inSentence+"{0,80}?[\\s`'\"(](jq|jsonlint|json\\.tool)\\b", "validat", "check", "verif")
	// "You MUST NOT read or use ground_truth.yaml", "NEVER read ground_truth.yaml".
	forbiddenRule = newWordRule("(?i)\\b(?:must\\s+not|never|do\\s+not|don'?t)\\s+(?:read|open|use|access|view|cat|look\\s+at)\\b"+inSentence+"{0,40}?\\b([\\w.-]+\\.(?:ya?ml|json|txt|csv|tsv|md))\\b", "must", "never", "do")
	// "Do not run `kubectl apply`", "NEVER use the curl command".
	bannedRule = newWordRule("(?i)\\b(?:must\\s+not|never|do\\s+not|don'?t)\\s+(?:run|execute|use|call|invoke)\\s+(?:the\\s+)?(?:`([^`\\n]{1,40})`|([\\w.-]+)\\s+(?:command|tool|binary|cli)\\b)", "must", "never", "do")
	// Lines that introduce the input data: "Your incident data is located in these directories (READ-ONLY):".
	dataIntro = lineRule{text.Regexp(`(?i)\bread-only\b|\bdata\b[^\n]{0,40}\b(?:located|stored|available)\b`), []string{"read-only", "data"}}
	// A line that holds nothing but a path, possibly as a list item.
	pathLine = text.Regexp("^\\s*(?:[-*•]\\s*)?`?(/[^\\s`]+)`?\\s*$")
	// "Your working directory (for writing output, code, etc.) is: /path".
	workDirRule = newWordRule("(?i)\\bworking directory\\b[^\\n:/]{0,40}?(?:is)?:?\\s*`?(/[^\\s`'\"*]+)", "working directory")
	// "Limit the explanation fields (`reasoning`, `evidence`) to no more than 2 sentences each."
	sentenceRule = phraseRule{text.Regexp(`(?i)[^.\n]*\bno more than (\d|one|two|three|four|five) sentences?\b[^.\n]*`), "no more than"}
	backticked   = text.Regexp("`(\\w+)`")
	// "NEVER output anything other than the final JSON", "Return only the required JSON structure".
	jsonOnlyRule = newWordRule(`(?i)\b(?:never|do not|don'?t)\s+output\s+anything\s+(?:other|else)\s+than\s+(?:the\s+)?(?:final\s+)?json\b|\breturn\s+only\s+the\s+(?:required\s+|final\s+)?json\b`, "never", "do", "return")
)

var numberWords = map[string]int{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}

// taskCache keeps parsed prompts: the runs of a cohort share a few prompts
// (an investigation, a remediation), and parsing tens of kilobytes of one
// with regular expressions for every trace would cost more than all the
// detectors together. It holds at most taskCacheSize prompts and starts over
// when full.
var taskCache struct {
	sync.Mutex
	specs map[[2]string]*taskSpec
}

const taskCacheSize = 16

// task returns the requirements of the run's task.
func (f *facts) task() *taskSpec {
	if f.spec != nil {
		return f.spec
	}
	key := [2]string{f.t.Task, f.instructions()}
	taskCache.Lock()
	spec, ok := taskCache.specs[key]
	taskCache.Unlock()
	if !ok {
		// Parsed outside the lock: runs whose prompts differ (each names
		// its own directories) need not wait for each other's parse. Two
		// runs of one new prompt may both parse it, to the same spec.
		spec = parseTask(key[0], key[1])
		taskCache.Lock()
		if len(taskCache.specs) >= taskCacheSize || taskCache.specs == nil {
			taskCache.specs = map[[2]string]*taskSpec{}
		}
		taskCache.specs[key] = spec
		taskCache.Unlock()
	}
	f.spec = spec
	return spec
}

// instructions returns the harness's standing instructions to the agent: the
// text of its system steps of type "instructions", joined.
func (f *facts) instructions() string {
	var instr []string
	for i := range f.t.Steps {
		if s := &f.t.Steps[i]; s.Kind == trace.KindSystem && s.Type == "instructions" {
			instr = append(instr, s.Text)
		}
	}
	return strings.Join(instr, "\n")
}

func parseTask(task, instructions string) *taskSpec {
	spec := &taskSpec{}
	asked, standing := newPrompt(task), newPrompt(instructions)
	first := func(rule func(prompt) bool) {
		if !rule(asked) {
			rule(standing)
		}
	}
	first(func(text prompt) bool {
		m := outputRule.find(text)
		if m == nil {
			return false
		}
		spec.Output, spec.OutputPhrase = filepath.Base(m[1]), m[0]
		return true
	})
	first(func(text prompt) bool {
		m := validatorRule.find(text)
		if m == nil {
			return false
		}
		spec.Validator, spec.ValidatorPhrase = strings.ToLower(m[1]), m[0]
		return true
	})
	spec.DataDirs = dataDirs(asked)
	spec.DataFromTask = len(spec.DataDirs) > 0
	if !spec.DataFromTask {
		spec.DataDirs = dataDirs(standing)
	}
	first(func(text prompt) bool {
		m := workDirRule.find(text)
		if m == nil {
			return false
		}
		spec.WorkDir = strings.TrimRight(m[1], ".,;:)")
		return true
	})
	first(func(text prompt) bool {
		m := sentenceRule.find(text)
		if m == nil {
			return false
		}
		n, ok := numberWords[strings.ToLower(m[1])]
		if !ok {
			n = int(m[1][0] - '0')
		}
		for _, f := range backticked().FindAllStringSubmatch(m[0], -1) {
			spec.LimitedFields = append(spec.LimitedFields, f[1])
		}
		if len(spec.LimitedFields) == 0 {
			return false
		}
		spec.SentenceLimit, spec.LimitPhrase = n, strings.TrimSpace(m[0])
		return true
	})
	first(func(text prompt) bool {
		m := jsonOnlyRule.find(text)
		if m == nil {
			return false
		}
		spec.FinalJSONOnly, spec.FinalJSONPhrase = true, m[0]
		return true
	})
	spec.Mentioned = map[string]bool{}
	for _, text := range []string{task, instructions} {
		for _, p := range absolutePaths(text) {
			spec.Mentioned[p] = true
		}
	}
	seen := map[string]bool{}
	for _, text := range []prompt{asked, standing} {
		for _, m := range bannedRule.findAll(text, -1) {
			if what := m[1] + m[2]; !seen["run "+what] {
				seen["run "+what] = true
				spec.Banned = append(spec.Banned, prohibition{Name: what, Phrase: m[0]})
			}
		}
		for _, m := range forbiddenRule.findAll(text, -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				spec.Forbidden = append(spec.Forbidden, prohibition{Name: m[1], Phrase: m[0]})
			}
		}
	}
	return spec
}

// dataDirs reads the input directories a prompt names: the absolute paths on
// a line that introduces read-only or input data, and on the lines just
// after it that hold nothing but a path.
func dataDirs(p prompt) []string {
	lines, lower := strings.Split(p.text, "\n"), strings.Split(p.lower, "\n")
	var dirs []string
	seen := map[string]bool{}
	add := func(p string) {
		p = strings.TrimRight(p, ".,;:)*/")
		if p != "" && !seen[p] {
			seen[p] = true
			dirs = append(dirs, p)
		}
	}
	for i, line := range lines {
		if !dataIntro.matches(line, lower[i], p.folded) {
			continue
		}
		for _, p := range absolutePaths(line) {
			add(p)
		}
		for j := i + 1; j < len(lines) && j <= i+4; j++ {
			if strings.TrimSpace(lines[j]) == "" {
				continue
			}
			m := pathLine().FindStringSubmatch(lines[j])
			if m == nil {
				break
			}
			add(m[1])
		}
	}
	return dirs
}

// promptStep returns the first step that shows the task's own words (an
// instructions, user or harness step containing phrase), so a finding about
// a requirement can cite where the run was given it; -1 when no step holds
// the phrase (formats that keep the task outside the steps).
func (f *facts) promptStep(phrase string) int {
	if phrase == "" {
		return -1
	}
	for i := range f.t.Steps {
		s := &f.t.Steps[i]
		if trace.ByAgent(s) || s.Kind == trace.KindToolResult {
			continue
		}
		if quotable(f.t, []int{i}, phrase) != "" {
			return i
		}
	}
	return -1
}
