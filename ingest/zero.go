package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/faultline/faultline/trace"
)

// A Zero run directory is the workspace ITBench's Zero agent leaves behind:
// the answer file agent_output.json (and AGENTS.md, config.toml) beside a
// sessions/ tree of Codex rollouts, usually at <scenario>/<trial>/. The
// diagnosis belongs to the session that wrote it; a directory may hold
// several sessions (retries, other models, a remediation run), so the file
// is attached only where that is certain.

// AnswerFile is the file ITBench's Zero agent must write its diagnosis to.
const AnswerFile = "agent_output.json"

// JudgeFile holds the official ITBench scorer's verdict on a run, in the
// published trajectories.
const JudgeFile = "judge_output.json"

// OfficialSource is the outcome source of the official scorer's verdicts.
const OfficialSource = "itbench-official"

type zeroDirs struct {
	dirs map[string]*zeroDir
}

type zeroDir struct {
	root      string
	zero      bool   // looks like a Zero workspace
	answer    []byte // agent_output.json, when present
	sessions  int    // session files under sessions/
	official  *trace.Outcome
	scenario  string
	trial     string
	readError string
}

func newZeroDirs() *zeroDirs { return &zeroDirs{dirs: map[string]*zeroDir{}} }

// runDirOf returns the run directory of a rollout file: the parent of its
// nearest "sessions" ancestor, or its own directory when that holds the
// answer file. The path is kept as given (relative paths stay relative, so
// reports and stored sources read as the user wrote them) unless only the
// absolute path reaches the run directory.
func runDirOf(path string) string {
	if dir := sessionsParent(filepath.Clean(path)); dir != "" {
		return dir
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	if dir := sessionsParent(abs); dir != "" {
		return dir
	}
	// The published trajectories keep session.jsonl in the run directory
	// itself, beside the answer and the official judge's verdict, under
	// Scenario-N/<run>/.
	dir := filepath.Dir(path)
	for _, marker := range []string{AnswerFile, JudgeFile} {
		if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
			return dir
		}
	}
	if scenario, _ := scenarioTrial(dir); scenario != "" {
		return dir
	}
	return ""
}

func sessionsParent(path string) string {
	for dir := filepath.Dir(path); ; {
		if filepath.Base(dir) == "sessions" {
			return filepath.Dir(dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir || filepath.Base(dir) == ".." {
			return ""
		}
		dir = parent
	}
}

func (z *zeroDirs) get(root string) *zeroDir {
	if d, ok := z.dirs[root]; ok {
		return d
	}
	d := &zeroDir{root: root}
	z.dirs[root] = d
	if b, err := os.ReadFile(filepath.Join(root, AnswerFile)); err == nil {
		d.answer = b
		d.zero = true
	} else if !os.IsNotExist(err) {
		d.readError = fmt.Sprintf("cannot read %s: %s", AnswerFile, errText(err))
	}
	if _, err := os.Stat(filepath.Join(root, "AGENTS.md")); err == nil {
		d.zero = true
	}
	if b, err := os.ReadFile(filepath.Join(root, JudgeFile)); err == nil {
		d.zero = true
		if o, err := officialOutcome(b); err != nil {
			d.readError = fmt.Sprintf("%s: %v", JudgeFile, err)
		} else {
			d.official = o
		}
	}
	_ = filepath.WalkDir(filepath.Join(root, "sessions"), func(p string, e os.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			d.sessions++
		}
		return nil
	})
	if d.sessions == 0 {
		d.sessions = 1 // the rollout sits directly in the run directory
	}
	d.scenario, d.trial = scenarioTrial(root)
	if d.scenario != "" {
		d.zero = true
	}
	return d
}

// officialOutcome reads the official scorer's entity scores from a
// judge_output.json: flat_scores.root_cause_entity_* (kept whole in Detail,
// @k included); success is recall 1, faultline's default rule.
func officialOutcome(data []byte) (*trace.Outcome, error) {
	var judge struct {
		Flat map[string]any `json:"flat_scores"`
	}
	if err := json.Unmarshal(data, &judge); err != nil {
		return nil, fmt.Errorf("not readable: %s", jsonErrorText(err))
	}
	recall, ok := judge.Flat["root_cause_entity_recall"].(float64)
	if !ok {
		return nil, fmt.Errorf("no flat_scores.root_cause_entity_recall")
	}
	kept := map[string]any{}
	for k, v := range judge.Flat {
		if strings.HasPrefix(k, "root_cause_entity") {
			kept[k] = v
		}
	}
	detail, _ := json.Marshal(kept)
	success := recall >= 1
	return &trace.Outcome{Source: OfficialSource, Metric: "root_cause_recall", Score: &recall, Success: &success, Detail: string(detail)}, nil
}

var numeric = regexp.MustCompile(`^[0-9]+$`)

var scenarioDir = regexp.MustCompile(`(?i)^scenario[-_]?([0-9]+)$`)

// scenarioTrial reads the scenario and trial from the end of a run
// directory's path: <scenario>/<trial> with both numeric (the Zero
// workspace), or Scenario-N/<run> with any run name (the published
// trajectories and the leaderboard layout).
func scenarioTrial(root string) (scenario, trial string) {
	trialDir := filepath.Base(root)
	parent := filepath.Base(filepath.Dir(root))
	if m := scenarioDir.FindStringSubmatch(parent); m != nil {
		return m[1], trialDir
	}
	if numeric.MatchString(trialDir) && numeric.MatchString(parent) {
		return parent, trialDir
	}
	return "", ""
}

// annotate fills in what the run directory says about a Codex trace.
func (z *zeroDirs) annotate(in *Input, path string, t *trace.Trace) {
	root := runDirOf(path)
	if root == "" {
		return
	}
	d := z.get(root)
	if !d.zero {
		return
	}
	t.System = "itbench-zero"
	if t.Scenario == "" {
		t.Scenario, t.Trial = d.scenario, d.trial
	}
	if d.readError != "" {
		in.Report(0, Error, "run directory %s: %s", root, d.readError)
	}
	if d.official != nil && d.sessions == 1 {
		t.Outcomes = append(t.Outcomes, *d.official)
	}
	if d.answer == nil {
		return
	}
	write, wrote := LastWrite(t, AnswerFile)
	switch {
	case d.sessions == 1:
	case wrote && write.Complete && sameJSON([]byte(write.Content), d.answer):
	default:
		if wrote {
			in.Report(0, Notice, "session %s wrote %s, but the file in %s is not its last write; not attached", t.ID, AnswerFile, root)
		}
		return
	}
	t.Diagnosis = &trace.Diagnosis{Source: filepath.Join(root, AnswerFile), Body: string(d.answer)}
}

// sameJSON reports whether a and b hold equal JSON values.
func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// FileWrite is a tool call that wrote a file.
type FileWrite struct {
	Step     int    // the tool call
	Content  string // what was written, when the call shows it all
	Complete bool   // Content is the whole file (not a patch of an update)
}

// LastWrite finds the last tool call that wrote a file with the given base
// name: an apply_patch that adds or updates it, or a shell command that
// redirects a heredoc or an echo into it.
func LastWrite(t *trace.Trace, name string) (FileWrite, bool) {
	for i := len(t.Steps) - 1; i >= 0; i-- {
		s := &t.Steps[i]
		if s.Kind != trace.KindToolCall || !strings.Contains(s.Args, name) {
			continue
		}
		if w, ok := patchWrite(s.Args, name); ok {
			w.Step = i
			return w, true
		}
		if w, ok := shellWrite(s.Args, name); ok {
			w.Step = i
			return w, true
		}
	}
	return FileWrite{}, false
}

// patchWrite reads an apply_patch body ("*** Add File: path" followed by
// "+"-prefixed lines), given raw or wrapped in {"input": ...}.
func patchWrite(args, name string) (FileWrite, bool) {
	body := args
	var wrapped struct {
		Input string `json:"input"`
	}
	if json.Unmarshal([]byte(args), &wrapped) == nil && wrapped.Input != "" {
		body = wrapped.Input
	}
	if !strings.Contains(body, "*** Begin Patch") {
		return FileWrite{}, false
	}
	lines := strings.Split(body, "\n")
	var found bool
	var w FileWrite
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r")
		for _, op := range []string{"*** Add File: ", "*** Update File: "} {
			target, ok := strings.CutPrefix(line, op)
			if !ok || filepath.Base(strings.TrimSpace(target)) != name {
				continue
			}
			found = true
			w = FileWrite{Complete: op == "*** Add File: "}
			if !w.Complete {
				continue
			}
			var content []string
			for j := i + 1; j < len(lines) && !strings.HasPrefix(lines[j], "*** "); j++ {
				content = append(content, strings.TrimPrefix(strings.TrimRight(lines[j], "\r"), "+"))
			}
			w.Content = strings.Join(content, "\n")
		}
	}
	return w, found
}

// shellCommand extracts the command text of a shell tool call: a string, or
// an argv list whose script argument (after -c / -lc) carries the command.
func shellCommand(args string) string {
	var call struct {
		Command json.RawMessage `json:"command"`
		Cmd     string          `json:"cmd"`
	}
	if json.Unmarshal([]byte(args), &call) != nil {
		return args
	}
	if call.Cmd != "" {
		return call.Cmd
	}
	var argv []string
	if json.Unmarshal(call.Command, &argv) == nil {
		return strings.Join(argv, " ")
	}
	var str string
	if json.Unmarshal(call.Command, &str) == nil {
		return str
	}
	return args
}

var (
	heredocInto = regexp.MustCompile(`<<-?\s*['"]?(\w+)['"]?\s*>\s*(\S+)|>\s*(\S+)\s*<<-?\s*['"]?(\w+)['"]?`)
	echoInto    = regexp.MustCompile(`(?s)(?:echo|printf)\s+(?:-e\s+)?'([^']*)'\s*>\s*(\S+)|(?:echo|printf)\s+(?:-e\s+)?"((?:[^"\\]|\\.)*)"\s*>\s*(\S+)`)
)

// shellWrite recognises `cat <<EOF > file`, `cat > file <<EOF` and
// `echo '...' > file` writes.
func shellWrite(args, name string) (FileWrite, bool) {
	cmd := shellCommand(args)
	if m := heredocInto.FindStringSubmatchIndex(cmd); m != nil {
		sub := func(k int) string {
			if m[2*k] < 0 {
				return ""
			}
			return cmd[m[2*k]:m[2*k+1]]
		}
		delim, target := sub(1), sub(2)
		if delim == "" {
			delim, target = sub(4), sub(3)
		}
		if filepath.Base(strings.Trim(target, `'"`)) == name {
			rest := cmd[m[1]:]
			_, body, ok := strings.Cut(rest, "\n")
			if !ok {
				return FileWrite{}, true
			}
			end := strings.Index(body, "\n"+delim)
			if strings.HasPrefix(body, delim) {
				end = 0
			}
			if end < 0 {
				return FileWrite{Content: body}, true
			}
			return FileWrite{Content: body[:end], Complete: true}, true
		}
	}
	for _, m := range echoInto.FindAllStringSubmatch(cmd, -1) {
		content, target := m[1], m[2]
		if target == "" {
			content, target = m[3], m[4]
		}
		if filepath.Base(strings.Trim(target, `'"`)) == name {
			return FileWrite{Content: content, Complete: true}, true
		}
	}
	return FileWrite{}, false
}
