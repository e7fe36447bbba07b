// Command generate writes faultline's bundled example cohort: simulated runs
// of ITBench's "Zero" SRE agent (a wrapper around the Codex CLI) on two
// fictional OpenTelemetry Astronomy Shop incidents, in the layout Zero leaves
// behind, with the incidents' ground truth beside them.
//
// Every file is written by this program; none of it is real model output.
// The runs are scripted (cohort.go) so that their outcomes and failure modes
// are known in advance, which is what makes `faultline analyze examples/`
// checkable. The output is the same byte for byte on every run (fixed clock,
// ids derived from names), and a test keeps the committed copy in step:
//
//	go run ./examples/generate            # from the repository root
//	go run ./examples/generate -out DIR   # writes DIR/itbench-zero
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// cohortDir is the directory, under -out, that the generator owns.
const cohortDir = "itbench-zero"

func main() {
	out := flag.String("out", "examples", "directory to write "+cohortDir+"/ into")
	flag.Parse()
	if err := generate(*out); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

// generate replaces out/itbench-zero with a fresh copy of the cohort, so
// that files of runs no longer in the script do not linger.
func generate(out string) error {
	root := filepath.Join(out, cohortDir)
	if err := os.RemoveAll(root); err != nil {
		return err
	}
	files := cohortFiles()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// cohortFiles returns every file of the cohort by slash-separated path
// relative to itbench-zero/.
func cohortFiles() map[string][]byte {
	files := map[string][]byte{}
	var truths []groundTruth
	for _, sc := range scenarios() {
		truths = append(truths, sc.truth)
	}
	files["ground_truths.json"] = indentJSON(truths)
	runs := cohort()
	for i := range runs {
		r := &runs[i]
		dir := r.dir()
		files[dir+"/AGENTS.md"] = []byte(r.agentsMD())
		if r.answer != nil {
			files[dir+"/agent_output.json"] = []byte(r.answerJSON() + "\n")
		}
		files[dir+"/"+r.rolloutPath()] = writeRollout(r)
	}
	return files
}

// obj is a JSON object that keeps its keys in the order given, the order in
// which the Codex CLI writes them.
type obj []kv

type kv struct {
	k string
	v any
}

// MarshalJSON implements json.Marshaler.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(compactJSON(f.k))
		b.WriteByte(':')
		b.WriteString(compactJSON(f.v))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// compactJSON encodes v on one line. HTML characters are left alone, as the
// Codex CLI leaves them: "<environment_context>" stays readable.
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only the generator's own values are encoded
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// indentJSON encodes v with two-space indentation and a final newline.
func indentJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return b.Bytes()
}
