// Package synth writes simulated runs of ITBench's "Zero" SRE agent (a
// wrapper around the Codex CLI) with failure modes planted at known steps,
// so that faultline's detectors can be measured against a known answer.
//
// A corpus is laid out as Zero leaves its runs behind, one run directory
// per trace (<model>/<scenario>/<trial>/ with AGENTS.md, agent_output.json
// when the run wrote one, and sessions/.../rollout-*.jsonl), plus the
// incidents' ground truth (ground_truths.json) and a manifest of what was
// planted where (planted.json). Every file is made up; none of it is real
// model output.
//
// Two corpora come out of it: Generate's, seeded, in which each trace is a
// clean investigation (a control) or one with a chosen mode planted in it;
// and Examples, the hand-written cohort bundled in examples/, which tells a
// story per simulated model. Both are the same byte for byte on every run:
// fixed clocks, ids derived from names and the seed, no map order.
package synth

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/faultline/faultline/taxonomy"
)

// ManifestFile is the manifest's name in a corpus directory.
const ManifestFile = "planted.json"

// Manifest says, for every trace of a corpus, what was planted in it and
// where. It is written as planted.json.
type Manifest struct {
	Generator string  `json:"generator"` // "faultline synth"
	Corpus    string  `json:"corpus"`    // "examples" or "seeded"
	Seed      *uint64 `json:"seed,omitempty"`
	Taxonomy  string  `json:"taxonomy"` // the taxonomy version of the mode codes
	Traces    []Trace `json:"traces"`
}

// Trace is one trace of a corpus.
type Trace struct {
	ID       string `json:"id"`   // the session id, which is faultline's trace id
	Path     string `json:"path"` // the rollout file, relative to the corpus directory
	Model    string `json:"model"`
	Scenario string `json:"scenario"`
	Trial    int    `json:"trial"`
	// Steps is how many steps faultline's Codex ingest makes of the rollout;
	// planted step indices are positions among them.
	Steps int `json:"steps"`
	// Control is set when nothing was planted: a clean run.
	Control bool      `json:"control"`
	Planted []Planted `json:"planted"`
}

// Planted is one mode planted in a trace.
type Planted struct {
	Mode    string `json:"mode"`    // a taxonomy code, or ModeSystem
	Variant string `json:"variant"` // the way it was planted, e.g. "identical-call"
	Steps   []int  `json:"steps"`   // the step indices it was planted at, ascending
	How     string `json:"how"`     // what the run does, in one sentence
}

// Corpus is a generated set of runs: every file, by slash-separated path
// relative to the corpus directory, and the manifest (also among the files).
type Corpus struct {
	Files    map[string][]byte
	Manifest Manifest
}

// Examples is the cohort bundled in faultline's examples/itbench-zero.
func Examples() *Corpus { return build("examples", nil, scenarios(), cohort()) }

// build renders runs into a corpus with the ground truth of scs.
func build(kind string, seed *uint64, scs []*scenario, runs []run) *Corpus {
	c := &Corpus{Files: map[string][]byte{}, Manifest: Manifest{
		Generator: "faultline synth", Corpus: kind, Seed: seed, Taxonomy: taxonomy.Version, Traces: []Trace{},
	}}
	var truths []groundTruth
	for _, sc := range scs {
		truths = append(truths, sc.truth)
	}
	c.Files["ground_truths.json"] = indentJSON(truths)
	for i := range runs {
		r := &runs[i]
		dir := r.dir()
		c.Files[dir+"/AGENTS.md"] = []byte(r.agentsMD())
		if r.answer != "" {
			c.Files[dir+"/"+answerFile] = []byte(r.answer + "\n")
		}
		out := writeRollout(r)
		path := dir + "/" + r.rolloutPath()
		c.Files[path] = out.data
		c.Manifest.Traces = append(c.Manifest.Traces, Trace{
			ID: r.id(), Path: path, Model: r.model, Scenario: r.sc.id, Trial: r.trial,
			Steps: out.steps, Control: len(r.plants) == 0, Planted: located(r, out.planted),
		})
	}
	c.Files[ManifestFile] = indentJSON(c.Manifest)
	return c
}

// located pairs each of the run's plants with the steps it was marked at.
// A plant without a marked step, or a mark without a plant, is a bug in the
// script, caught here rather than written into a manifest.
func located(r *run, at map[string][]int) []Planted {
	out := []Planted{}
	for _, p := range r.plants {
		steps := at[p.mode]
		if len(steps) == 0 {
			panic(fmt.Sprintf("%s: %s is planted at no step", r.key(), p.mode))
		}
		delete(at, p.mode)
		sort.Ints(steps)
		out = append(out, Planted{Mode: p.mode, Variant: p.variant, Steps: slices.Compact(steps), How: p.how})
	}
	for mode := range at {
		panic(fmt.Sprintf("%s: a step is marked %s, which the run does not plant", r.key(), mode))
	}
	return out
}

// Write writes the corpus into dir. dir must be absent, empty, or a corpus
// written earlier (it holds planted.json), which is replaced entirely so
// that no file of an old run lingers. Anything else is refused rather than
// overwritten.
func (c *Corpus) Write(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case len(entries) == 0:
	default:
		if _, err := os.Stat(filepath.Join(dir, ManifestFile)); err != nil {
			return fmt.Errorf("%s is not empty and holds no %s, so it is not a corpus synth wrote; refusing to write into it", dir, ManifestFile)
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(c.Files))
	for name := range c.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, c.Files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}
