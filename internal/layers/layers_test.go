// Package layers_test checks the shape of the module's imports: which
// package may depend on which. The rules are the README's architecture
// diagram; a change that adds a forbidden edge fails here, naming it.
package layers_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/faultline/faultline/"

// deps returns, for every package of the module, the module packages it
// depends on, directly or not (tests left out), keyed and listed by path
// relative to the module.
func deps(t *testing.T) map[string][]string {
	t.Helper()
	touchSources(t)
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasPrefix(fields[0], module) {
			continue
		}
		pkg := strings.TrimPrefix(fields[0], module)
		graph[pkg] = []string{}
		for _, d := range fields[1:] {
			if strings.HasPrefix(d, module) {
				graph[pkg] = append(graph[pkg], strings.TrimPrefix(d, module))
			}
		}
	}
	return graph
}

// touchSources opens every Go file of the module: go test caches a result
// by the files the test reads, and go list's reading is not seen, so
// without this a new import would not rerun the test.
func touchSources(t *testing.T) {
	t.Helper()
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			f.Close()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// under reports whether pkg is dir or below it.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

func TestLayers(t *testing.T) {
	graph := deps(t)
	if len(graph) < 20 {
		t.Fatalf("only %d packages listed: %v", len(graph), graph)
	}
	// Each rule: the packages it applies to, and the only module packages
	// they may depend on (nil: none at all), or the ones they must not.
	rules := []struct {
		name      string
		applies   func(pkg string) bool
		allowed   []string // prefixes; checked when set
		forbidden []string // prefixes
	}{
		{"the trace model depends on nothing", func(p string) bool { return p == "trace" }, []string{}, nil},
		{"the tool-call vocabulary sits on the trace model", func(p string) bool { return p == "trace/toolcall" }, []string{"trace", "internal/jsonscan"}, nil},
		{"the taxonomy and statistics depend on nothing", func(p string) bool { return p == "taxonomy" || p == "stats" }, []string{}, nil},
		{"detectors are pure rules over the model", func(p string) bool { return p == "detect" },
			[]string{"trace", "taxonomy", "internal/itbench", "internal/text", "internal/jsonscan"}, nil},
		{"the guard is the detectors at run time", func(p string) bool { return p == "guard" },
			[]string{"trace", "taxonomy", "detect", "internal/itbench", "internal/yamlerr", "internal/text", "internal/jsonscan"}, nil},
		{"rules compile to detectors, as data over the model", func(p string) bool { return p == "rules" },
			[]string{"trace", "taxonomy", "detect", "internal/itbench", "internal/yamlerr", "internal/text", "internal/jsonscan"}, nil},
		{"the string helpers depend on nothing", func(p string) bool { return p == "internal/text" }, []string{}, nil},
		{"the JSON scanner depends on nothing", func(p string) bool { return p == "internal/jsonscan" }, []string{}, nil},
		{"the store vocabulary holds no database code", func(p string) bool { return p == "internal/store" }, []string{"trace"}, nil},
		{"no store links the judge", func(p string) bool { return under(p, "internal/store") }, nil, []string{"internal/judge"}},
		{"the analysis packages read stores through their interfaces",
			func(p string) bool {
				return under(p, "internal/analyze") || under(p, "internal/eval") || under(p, "internal/report") || under(p, "internal/pipeline")
			},
			nil, []string{"internal/store/sqlite", "internal/store/postgres", "internal/web", "cmd"}},
		{"the web UI reads the store through its interface", func(p string) bool { return p == "internal/web" }, nil, []string{"internal/store/sqlite", "internal/store/postgres"}},
		{"the library (trace, taxonomy, ingest, detect, stats, guard, rules) uses no application package",
			func(p string) bool {
				return under(p, "trace") || p == "taxonomy" || under(p, "ingest") || p == "detect" || p == "stats" || p == "guard" || p == "rules"
			},
			nil, []string{"internal/analyze", "internal/eval", "internal/export", "internal/judge", "internal/labels", "internal/pipeline",
				"internal/receive", "internal/report", "internal/score", "internal/store", "internal/synth", "internal/web", "cmd"}},
		{"nothing depends on a command", func(p string) bool { return !under(p, "cmd") }, nil, []string{"cmd", "bench"}},
	}
	for pkg, ds := range graph {
		for _, r := range rules {
			if !r.applies(pkg) {
				continue
			}
			for _, d := range ds {
				if r.allowed != nil && !allowedBy(d, r.allowed) {
					t.Errorf("%s depends on %s: %s", pkg, d, r.name)
				}
				for _, f := range r.forbidden {
					if under(d, f) {
						t.Errorf("%s depends on %s: %s", pkg, d, r.name)
					}
				}
			}
		}
	}
}

func allowedBy(dep string, allowed []string) bool {
	for _, a := range allowed {
		if under(dep, a) || dep == path.Clean(a) {
			return true
		}
	}
	return false
}
