package detect

import (
	"fmt"
	"strings"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// OutsideDataDir finds FM-2.3 where the agent wanders the filesystem outside its task's data.
var OutsideDataDir = &Detector{
	Name: "outside-data-dir",
	Mode: "FM-2.3",
	Doc: `The agent reads or searches paths outside the directories its task gives it.
It needs the task's data directories (see tooling-detour); the working directory the prompt names
and every path the prompt itself mentions are allowed too, and so are system locations a command may
name without looking for data (/usr, /bin, /sbin, /lib, /opt, /dev, /proc, /tmp, /private,
/var/folders). A successful call whose arguments name an absolute path outside all of these is
wandering; failed calls are not counted (a mistyped path is a slip, not a search). One finding
citing the calls and quoting the first such path; confidence 0.7, 0.8 when two calls or more wander
or one climbs into a parent of a data directory.
Blind spots: relative paths and "cd .." escapes are not resolved; paths built inside scripts are not
seen; a prompt that names no data directory is not judged.`,
	Run: runOutsideDataDir,
}

var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib64", "/opt", "/dev", "/proc", "/tmp", "/private", "/var/folders", "/etc/ssl"}

func runOutsideDataDir(p *Pass) {
	t, f := p.Trace, p.facts
	spec := f.task()
	if len(spec.DataDirs) == 0 || !f.agentActed() {
		return
	}
	allowed := append(append([]string(nil), spec.DataDirs...), systemDirs...)
	if spec.WorkDir != "" {
		allowed = append(allowed, spec.WorkDir)
	}
	inside := func(path string) bool {
		if path == "/" || spec.Mentioned[path] {
			return true
		}
		for _, dir := range allowed {
			if under(path, dir) {
				return true
			}
		}
		return false
	}
	var calls []int
	first := ""
	climbs := false
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Kind != trace.KindToolCall || !f.succeeded(i) {
			continue
		}
		for _, path := range absolutePaths(s.Args) {
			if inside(path) {
				continue
			}
			calls = append(calls, i)
			if first == "" {
				first = path
			}
			for _, d := range spec.DataDirs {
				climbs = climbs || strings.HasPrefix(d, path+"/")
			}
			break
		}
	}
	if len(calls) == 0 {
		return
	}
	conf := 0.7
	if len(calls) > 1 || climbs {
		conf = 0.8
	}
	p.Report(trace.Finding{
		Steps:      calls,
		Quote:      first,
		Confidence: conf,
		Explanation: fmt.Sprintf("The task confines the agent to %s, and %s looked outside it, first at %s (step %d).",
			strings.Join(spec.DataDirs, ", "), text.Plural(len(calls), "call", "calls"), first, calls[0]),
	})
}
