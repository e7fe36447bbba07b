package synth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// Slack is how far, in steps, a finding may cite from a planted step and
// still count as found at it: a detector may cite the reasoning before a
// call, or the result after it.
const Slack = 2

// Scorecard is how well detectors find what a corpus has planted.
type Scorecard struct {
	Traces   int `json:"traces"`
	Controls int `json:"controls"`
	// Modes scores every mode planted or reported, counting a finding of
	// any detector of the mode; Detectors scores each detector alone.
	Modes     []Score `json:"modes"`
	Detectors []Score `json:"detectors"`
	// Variants breaks recall down by the way a mode was planted, counting
	// a finding of any detector of the mode.
	Variants []VariantScore `json:"variants"`
	// Rejected lists findings the detector driver dropped because their
	// evidence did not check out: detector bugs.
	Rejected []string `json:"rejected,omitempty"`
}

// Score is the record of one detector, or of all the detectors of a mode
// (Detector empty), on a corpus.
type Score struct {
	Mode     string `json:"mode"`
	Detector string `json:"detector,omitempty"`
	// Planted is how many traces the mode was planted in; Located how many
	// of them have a finding citing a step within Slack of a planted one;
	// Anywhere how many have a finding at all.
	Planted  int `json:"planted"`
	Located  int `json:"located"`
	Anywhere int `json:"anywhere"`
	// ControlHits is how many controls have a finding; OtherHits how many
	// of the Others, traces planted with other modes only, have one.
	ControlHits int `json:"control_hits"`
	OtherHits   int `json:"other_hits"`
	Others      int `json:"others"`
}

// VariantScore is the recall of one way of planting a mode.
type VariantScore struct {
	Mode    string `json:"mode"`
	Variant string `json:"variant"`
	Planted int    `json:"planted"`
	Located int    `json:"located"`
	// Detectors are those that found it at a planted step at least once.
	Detectors []string `json:"detectors"`
}

// ReadManifest reads dir/planted.json.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	return &m, nil
}

// Measure ingests the corpus in dir as faultline ingests any directory,
// runs the detectors on every trace and scores them against the manifest.
// It fails when the corpus does not ingest cleanly or a trace's steps are
// not numbered as the manifest says: then the planted locations would
// mean nothing.
func Measure(ctx context.Context, dir string, ds []*detect.Detector) (*Scorecard, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	var problems []string
	traces, err := readCorpus(ctx, dir, func(i ingest.Issue) {
		if i.Severity == ingest.Error {
			problems = append(problems, i.String())
		}
	})
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("the corpus does not ingest cleanly:\n%s", strings.Join(problems, "\n"))
	}
	sc := &Scorecard{Traces: len(m.Traces)}
	found := map[string][]trace.Finding{} // by trace id
	for _, t := range m.Traces {
		got, ok := traces[t.ID]
		switch {
		case !ok:
			return nil, fmt.Errorf("trace %s (%s) is in the manifest but was not ingested", t.ID, t.Path)
		case len(got.Steps) != t.Steps:
			return nil, fmt.Errorf("trace %s (%s): faultline numbers %d steps, the manifest %d", t.ID, t.Path, len(got.Steps), t.Steps)
		}
		fs, errs := detect.Run(got, ds)
		for _, err := range errs {
			sc.Rejected = append(sc.Rejected, err.Error())
		}
		found[t.ID] = fs
		if t.Control {
			sc.Controls++
		}
	}
	modes := plantedModes(m)
	for _, d := range ds {
		sc.Detectors = append(sc.Detectors, score(m, found, d.Mode, d.Name))
		if !slices.Contains(modes, d.Mode) {
			modes = append(modes, d.Mode)
		}
	}
	slices.Sort(modes)
	for _, mode := range modes {
		sc.Modes = append(sc.Modes, score(m, found, mode, ""))
	}
	sc.Variants = variants(m, found)
	return sc, nil
}

// variants scores each way of planting a mode found in the manifest.
func variants(m *Manifest, found map[string][]trace.Finding) []VariantScore {
	var out []VariantScore
	index := map[[2]string]int{}
	for _, t := range m.Traces {
		for _, p := range t.Planted {
			k := [2]string{p.Mode, p.Variant}
			i, ok := index[k]
			if !ok {
				i = len(out)
				index[k] = i
				out = append(out, VariantScore{Mode: p.Mode, Variant: p.Variant, Detectors: []string{}})
			}
			v := &out[i]
			v.Planted++
			located := false
			for _, f := range found[t.ID] {
				if f.Mode == p.Mode && near(f.Steps, p.Steps) {
					located = true
					if !slices.Contains(v.Detectors, f.Detector) {
						v.Detectors = append(v.Detectors, f.Detector)
					}
				}
			}
			if located {
				v.Located++
			}
		}
	}
	slices.SortStableFunc(out, func(a, b VariantScore) int { return strings.Compare(a.Mode, b.Mode) })
	return out
}

// score counts the findings of a mode made by one detector, or by any
// when detector is empty, against the manifest.
func score(m *Manifest, found map[string][]trace.Finding, mode, detector string) Score {
	s := Score{Mode: mode, Detector: detector}
	for _, t := range m.Traces {
		var cited []int
		hit := false
		for _, f := range found[t.ID] {
			if f.Mode == mode && (detector == "" || f.Detector == detector) {
				hit = true
				cited = append(cited, f.Steps...)
			}
		}
		planted := t.plantedAt(mode)
		switch {
		case planted != nil:
			s.Planted++
			if hit {
				s.Anywhere++
			}
			if near(cited, planted) {
				s.Located++
			}
		case t.Control:
			if hit {
				s.ControlHits++
			}
		default:
			s.Others++
			if hit {
				s.OtherHits++
			}
		}
	}
	return s
}

// plantedAt returns the steps the mode was planted at in the trace, nil
// when it was not planted there.
func (t *Trace) plantedAt(mode string) []int {
	for _, p := range t.Planted {
		if p.Mode == mode {
			return p.Steps
		}
	}
	return nil
}

// near reports whether a cited step is within Slack of a planted one.
func near(cited, planted []int) bool {
	for _, c := range cited {
		for _, p := range planted {
			if c >= p-Slack && c <= p+Slack {
				return true
			}
		}
	}
	return false
}

func plantedModes(m *Manifest) []string {
	var out []string
	for _, t := range m.Traces {
		for _, p := range t.Planted {
			if !slices.Contains(out, p.Mode) {
				out = append(out, p.Mode)
			}
		}
	}
	slices.Sort(out)
	return out
}

// WriteTable prints the scorecard as three tables: per mode (any of its
// detectors) and per detector, the recall at the planted steps and
// anywhere in the planted traces and the false positives on the controls
// and on traces planted with other modes only; then per way of planting a
// mode, the recall at the planted steps and the detectors that found it.
func (sc *Scorecard) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "planted\tfound at step\tin trace\tfalse pos. controls\tfalse pos. others"
	row := func(s Score) string {
		return fmt.Sprintf("%d\t%s\t%s\t%s\t%s", s.Planted, ratio(s.Located, s.Planted), ratio(s.Anywhere, s.Planted), ratio(s.ControlHits, sc.Controls), ratio(s.OtherHits, s.Others))
	}
	fmt.Fprintln(tw, "mode\t"+header)
	for _, s := range sc.Modes {
		fmt.Fprintf(tw, "%s %s\t%s\n", s.Mode, taxonomy.Name(s.Mode), row(s))
	}
	fmt.Fprintln(tw, "\ndetector\tmode\t"+header)
	for _, s := range sc.Detectors {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Detector, s.Mode, row(s))
	}
	fmt.Fprintln(tw, "\nmode\tplanted as\tplanted\tfound at step\tby")
	for _, v := range sc.Variants {
		by := strings.Join(v.Detectors, ", ")
		if by == "" {
			by = "·"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", v.Mode, v.Variant, v.Planted, ratio(v.Located, v.Planted), by)
	}
	fmt.Fprintf(tw, "\n%d traces, %d controls. Found at step: a finding of the mode cites a step within %d of one it was planted at.\n", sc.Traces, sc.Controls, Slack)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(sc.Rejected) > 0 {
		_, err := fmt.Fprintf(w, "%d findings rejected by the detector driver (detector bugs):\n  %s\n", len(sc.Rejected), strings.Join(sc.Rejected, "\n  "))
		return err
	}
	return nil
}

// ratio prints n of d with a percentage, or "·" when d is zero.
func ratio(n, d int) string {
	if d == 0 {
		return "·"
	}
	return fmt.Sprintf("%d/%d %3.0f%%", n, d, 100*float64(n)/float64(d))
}

// readCorpus ingests a corpus into memory, by trace id; two traces with
// one id mean the generator broke its own ids.
func readCorpus(ctx context.Context, dir string, report func(ingest.Issue)) (map[string]*trace.Trace, error) {
	list, _, err := ingest.ReadAll(ctx, []string{dir}, ingest.Options{Report: report})
	if err != nil {
		return nil, err
	}
	byID := map[string]*trace.Trace{}
	for _, t := range list {
		if _, dup := byID[t.ID]; dup {
			return nil, errors.New("two traces with the id " + t.ID)
		}
		byID[t.ID] = t
	}
	return byID, nil
}
