package detect

import (
	"fmt"
	"path"
	"strings"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
	"github.com/faultline/faultline/trace/toolcall"
)

// ToolingDetour finds FM-2.3 where a tool error sends the agent off debugging its own tooling.
var ToolingDetour = &Detector{
	Name: "tooling-detour",
	Mode: "FM-2.3",
	Doc: `After a tool error the agent spends a run of calls on its own tooling instead of the task's data.
It needs the task's data directories (read from the prompt: the paths after "data is located in" or
"read-only snapshot"). A detour starts at a failed call and lasts until the next successful call
that reads the data: its arguments name a data directory and it does not run or edit one of the
agent's own scripts (files the agent wrote, other than the output: patches that add or update a
file, redirections into .py, .sh and the like). Plan updates and calls on the task's output file are
neutral. A detour of four calls or more of which at least two are tooling (calls that do not read
the data: version checks, installs, which, editing or re-running its own scripts) is one finding
citing its calls; confidence 0.55 plus 0.05 for each call beyond four, up to 0.8, plus 0.1 when it
installs packages. Runs whose prompt names no data directory are not judged.
Blind spots: a broken inline script (python -c) that names the data path counts toward a detour's
length but not as tooling; tasks whose tooling is the work (coding tasks) have no data directory and
are never judged; a detour that the prompt invited (it asks for Python scripts) is reported like any
other.`,
	Run: runToolingDetour,
}

// ownScripts lists the base names of the files the agent wrote itself (by
// a patch, or a redirection into a file with a script's extension), other
// than the task's output file: its own tooling.
func ownScripts(f *facts, output string) []string {
	var out []string
	seen := map[string]bool{output: true, "": true}
	for i := range f.t.Steps {
		if f.t.Steps[i].Kind != trace.KindToolCall {
			continue
		}
		cmd := f.command(i)
		patch := strings.Contains(cmd, "*** ")
		for _, file := range toolcall.WrittenFiles(cmd) {
			name := path.Base(file)
			if !seen[name] && (patch || scriptExt[path.Ext(name)]) {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out
}

var scriptExt = map[string]bool{".py": true, ".sh": true, ".js": true, ".ts": true, ".rb": true, ".pl": true, ".R": true}

// packageInstall matches commands that install software.
var packageInstall = text.Regexp(`\b(?:pip3?|uv pip|npm|yarn|apt(?:-get)?|brew|conda|gem|cargo)\s+(?:install|add)\b`)

func runToolingDetour(p *Pass) {
	t, f := p.Trace, p.facts
	spec := f.task()
	if len(spec.DataDirs) == 0 || !f.agentActed() {
		return
	}
	scripts := ownScripts(f, spec.Output)
	// A call reads the data when it names a data directory and is not a run
	// or an edit of one of the agent's own scripts.
	readsData := func(i int) bool {
		cmd := f.command(i)
		for _, s := range scripts {
			if strings.Contains(cmd, s) {
				return false
			}
		}
		for _, d := range spec.DataDirs {
			if strings.Contains(t.Steps[i].Args, d) {
				return true
			}
		}
		return false
	}
	var detour []int
	tooling, installs := 0, false
	flush := func() {
		if len(detour) >= 4 && tooling >= 2 {
			conf := min(0.8, 0.55+0.05*float64(len(detour)-4))
			if installs {
				conf += 0.1
			}
			steps := append([]int(nil), detour...)
			if r := t.Steps[detour[0]].Pair; r != nil {
				steps = append(steps, *r)
			}
			p.Report(trace.Finding{
				Steps:      steps,
				Quote:      firstLine(f.output(detour[0]), 120),
				Confidence: conf,
				Explanation: fmt.Sprintf("After the call at step %d failed, the agent spent %s (%d on its own tooling rather than the incident data) before it read the data again.",
					detour[0], text.Plural(len(detour), "call", "calls"), tooling),
			})
		}
		detour, tooling, installs = detour[:0], 0, false
	}
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Kind != trace.KindToolCall || isPlanTool(s.Tool) || (spec.Output != "" && strings.Contains(s.Args, spec.Output)) {
			continue
		}
		if t.Result(i) == nil {
			continue
		}
		ok, data := f.succeeded(i), readsData(i)
		switch {
		case ok && data:
			flush()
		case len(detour) == 0 && ok:
			// no detour under way
		default:
			detour = append(detour, i)
			if !data {
				tooling++
				installs = installs || packageInstall().MatchString(f.command(i))
			}
		}
	}
	flush()
}
