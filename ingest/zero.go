package ingest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/faultline/faultline/internal/bounded"
	"github.com/faultline/faultline/internal/itbench"
	"github.com/faultline/faultline/trace"
	"github.com/faultline/faultline/trace/toolcall"
)

// A Zero run directory is the workspace ITBench's Zero agent leaves behind:
// the answer file agent_output.json (and AGENTS.md, config.toml) beside a
// sessions/ tree of Codex rollouts, usually at <scenario>/<trial>/. The
// diagnosis belongs to the session that wrote it; a directory may hold
// several sessions (retries, other models, a remediation run), so the file
// is attached only where that is certain.

// zeroDirs reads run directories once for the rollouts under them. It
// keeps the last zeroDirsKept only: a walk reads a directory's files
// together, and keeping every answer file made memory grow with the number
// of runs. It is safe for concurrent use.
type zeroDirs struct {
	mu   sync.Mutex
	dirs *bounded.Map[string, *zeroDir]
	// listed holds the session files a directory walk counted under run
	// directories it walked whole (see sessionCounter), the last
	// zeroListedKept of them, so that a run directory's sessions/ is not
	// walked a second time (on many small runs, reading directories was a
	// tenth of an ingest's time, and this walk two fifths of it).
	listed *bounded.Map[string, int]
}

const (
	zeroDirsKept   = 64
	zeroListedKept = 4096
)

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

func newZeroDirs() *zeroDirs {
	return &zeroDirs{dirs: bounded.New[string, *zeroDir](zeroDirsKept), listed: bounded.New[string, int](zeroListedKept)}
}

// counted records the session files a walk counted under root's sessions/.
func (z *zeroDirs) counted(root string, sessions int) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.listed.Put(root, sessions)
}

// sessionCounter counts, in a directory walk, the session files under each
// run directory's sessions/ (the files whose path sessionsParent names it
// for), and hands each count to zeroDirs once the walk is past that
// sessions/, which it lists in one run. A count is handed on only where the
// walk went through the whole of sessions/, skipped nothing in it and met
// no run directory nested in it (whose files count for both).
type sessionCounter struct {
	z     *zeroDirs
	walk  string // the walk's root, cleaned
	root  string // the run directory being counted, "" for none
	count int
	// partial: the walk skipped part of root's sessions/ (a hidden
	// directory), started inside it, or met a run directory in it.
	partial bool
	// tainted are the run directories found partial before or while they
	// were counted: a directory skipped in one before its first file, or
	// one a nested run directory was met in.
	tainted map[string]bool
}

// file counts a regular file the walk met.
func (c *sessionCounter) file(p string) {
	p = filepath.Clean(p)
	root := sessionsParent(p)
	if root != c.root {
		if c.root != "" && c.inSessions(p) {
			c.taint(c.root)
		}
		c.flush()
		c.root, c.count = root, 0
		rel, err := filepath.Rel(c.walk, filepath.Join(root, "sessions"))
		c.partial = root == "" || err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || c.tainted[root]
	}
	c.count++
}

// inSessions reports whether p is under the sessions/ being counted.
func (c *sessionCounter) inSessions(p string) bool {
	return strings.HasPrefix(p, filepath.Join(c.root, "sessions")+string(filepath.Separator))
}

// skipped notes a directory the walk skipped (or could not read).
func (c *sessionCounter) skipped(dir string) {
	if root := sessionsParent(filepath.Join(filepath.Clean(dir), "x")); root != "" {
		c.taint(root)
	}
}

func (c *sessionCounter) taint(root string) {
	if c.tainted == nil {
		c.tainted = map[string]bool{}
	}
	c.tainted[root] = true
	if root == c.root {
		c.partial = true
	}
}

// flush hands on the count of the run directory being counted.
func (c *sessionCounter) flush() {
	if c.root != "" && !c.partial {
		c.z.counted(c.root, c.count)
	}
	c.root = ""
}

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
	for _, marker := range []string{itbench.AnswerFile, itbench.JudgeFile} {
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

// get returns what root holds, read once. The files are read outside the
// lock, so that the readers of other run directories do not wait on them;
// two readers of one directory at once may both read it, and the first
// kept is the one used.
func (z *zeroDirs) get(root string) *zeroDir {
	z.mu.Lock()
	d, ok := z.dirs.Get(root)
	sessions, counted := z.listed.Get(root)
	z.mu.Unlock()
	if ok {
		return d
	}
	d = readZeroDir(root, sessions, counted)
	z.mu.Lock()
	defer z.mu.Unlock()
	if kept, ok := z.dirs.Get(root); ok {
		return kept
	}
	z.dirs.Put(root, d)
	return d
}

// readZeroDir reads a run directory's answer, judge output and layout; its
// session files are counted unless a walk counted them already (counted).
func readZeroDir(root string, sessions int, counted bool) *zeroDir {
	d := &zeroDir{root: root}
	if b, err := os.ReadFile(filepath.Join(root, itbench.AnswerFile)); err == nil {
		d.answer = b
		d.zero = true
	} else if !os.IsNotExist(err) {
		d.readError = fmt.Sprintf("cannot read %s: %s", itbench.AnswerFile, errText(err))
	}
	if _, err := os.Stat(filepath.Join(root, "AGENTS.md")); err == nil {
		d.zero = true
	}
	if b, err := os.ReadFile(filepath.Join(root, itbench.JudgeFile)); err == nil {
		d.zero = true
		if o, err := officialOutcome(b); err != nil {
			d.readError = fmt.Sprintf("%s: %v", itbench.JudgeFile, err)
		} else {
			d.official = o
		}
	}
	if counted {
		d.sessions = sessions
	} else {
		_ = filepath.WalkDir(filepath.Join(root, "sessions"), func(p string, e os.DirEntry, err error) error {
			if err == nil && e.Type().IsRegular() {
				d.sessions++
			}
			return nil
		})
	}
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
	return &trace.Outcome{Source: itbench.OfficialSource, Metric: "root_cause_recall", Score: &recall, Success: &success, Detail: string(detail)}, nil
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
	t.System = itbench.System
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
	// With one session the file is its; among several, only the session
	// that wrote it (and left it so) is its author: one that only read it
	// (a remediation run) is not.
	if d.sessions > 1 {
		final := toolcall.Final(t, itbench.AnswerFile)
		if len(final.Writes) == 0 {
			return
		}
		if !final.Known || !toolcall.SameJSON(final.Content, string(d.answer)) {
			in.Report(0, Notice, "session %s wrote %s, but the file in %s is not its last write; not attached", t.ID, itbench.AnswerFile, root)
			return
		}
	}
	t.Diagnosis = &trace.Diagnosis{Source: filepath.Join(root, itbench.AnswerFile), Body: string(d.answer)}
}
