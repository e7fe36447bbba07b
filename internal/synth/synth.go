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
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
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

// Corpus is a generated set of runs, made and rendered as it is written,
// one run at a time: files are named by slash-separated paths relative to
// the corpus directory, and the manifest comes last.
type Corpus struct {
	kind string
	seed *uint64
	scs  []*scenario
	runs iter.Seq[run]
}

// Examples is the cohort bundled in faultline's examples/itbench-zero.
func Examples() *Corpus {
	return &Corpus{kind: "examples", scs: scenarios(), runs: slices.Values(cohort())}
}

// Each calls fn with every file of the corpus in turn, the ground truth
// first and the manifest (planted.json) last, and returns the manifest. It
// stops at fn's first error, or when ctx is done.
func (c *Corpus) Each(ctx context.Context, fn func(name string, data []byte) error) (*Manifest, error) {
	m := &Manifest{Generator: "faultline synth", Corpus: c.kind, Seed: c.seed, Taxonomy: taxonomy.Version, Traces: []Trace{}}
	var truths []groundTruth
	for _, sc := range c.scs {
		truths = append(truths, sc.truth)
	}
	if err := fn("ground_truths.json", indentJSON(truths)); err != nil {
		return nil, err
	}
	for r := range c.runs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dir := r.dir()
		if err := fn(dir+"/AGENTS.md", []byte(r.agentsMD())); err != nil {
			return nil, err
		}
		if r.answer != "" {
			if err := fn(dir+"/"+answerFile, []byte(r.answer+"\n")); err != nil {
				return nil, err
			}
		}
		out := writeRollout(&r)
		path := dir + "/" + r.rolloutPath()
		if err := fn(path, out.data); err != nil {
			return nil, err
		}
		m.Traces = append(m.Traces, Trace{
			ID: r.id(), Path: path, Model: r.model, Scenario: r.sc.id, Trial: r.trial,
			Steps: out.steps, Control: len(r.plants) == 0, Planted: located(&r, out.planted),
		})
	}
	if err := fn(ManifestFile, indentJSON(m)); err != nil {
		return nil, err
	}
	return m, nil
}

// Files renders the whole corpus in memory, by path, with its manifest: for
// a corpus of a size that fits (the examples, tests).
func (c *Corpus) Files() (map[string][]byte, *Manifest) {
	files := map[string][]byte{}
	m, _ := c.Each(context.Background(), func(name string, data []byte) error {
		files[name] = data
		return nil
	})
	return files, m
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

// Write writes the corpus into dir and returns its manifest. dir must be
// absent, empty, or a corpus written earlier (it holds planted.json), which
// is replaced entirely so that no file of an old run lingers. Anything else
// is refused rather than overwritten.
func (c *Corpus) Write(ctx context.Context, dir string) (*Manifest, error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case len(entries) == 0:
	default:
		if _, err := os.Stat(filepath.Join(dir, ManifestFile)); err != nil {
			return nil, fmt.Errorf("%s is not empty and holds no %s, so it is not a corpus synth wrote; refusing to write into it", dir, ManifestFile)
		}
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
	}
	made := map[string]bool{}
	return c.Each(ctx, func(name string, data []byte) error {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if parent := filepath.Dir(path); !made[parent] {
			if err := os.MkdirAll(parent, 0o755); err != nil {
				return err
			}
			made[parent] = true
		}
		return os.WriteFile(path, data, 0o644)
	})
}
