package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/synth"
	"github.com/faultline/faultline/taxonomy"
)

func (a *app) synthCommand() *cobra.Command {
	var (
		seed            uint64
		traces          int
		modes           []string
		out             string
		examples, score bool
		asJSON          bool
	)
	cmd := &cobra.Command{
		Use:   "synth (--out DIR | --score) [--seed N] [--traces K] [--modes CODE,...]",
		Short: "Write simulated Zero runs with failure modes planted at known steps",
		Long: `Write simulated runs of ITBench's Zero SRE agent (Codex CLI rollouts, AGENTS.md,
agent_output.json, ground_truths.json) on two made-up incidents, with MAST failure modes
planted at known steps, and clean controls, into DIR. Every third run is a control; the
others get the modes in turn, each mode in one of its variants. The same flags write the
same bytes.

DIR/planted.json is the manifest: for every trace its id, rollout path, model, scenario,
trial, number of steps, whether it is a control, and each planted mode with its variant,
the step indices it was planted at (as faultline numbers the steps: see faultline show)
and what the run does. DIR must be new, empty, or a corpus written earlier, which is
replaced.

--score measures the detectors on the corpus: it ingests it, runs them, and prints per
mode (any of its detectors) and per detector the recall at the planted steps (a finding
citing a step within 2 of a planted one) and the false positives on the controls and on
runs planted with other modes, then the recall of each variant. Without --out the corpus
goes to a temporary directory. --json prints the scorecard (with --score) or the manifest.

--examples writes the cohort bundled in examples/itbench-zero instead, which tells a
story per simulated model (see examples/README.md).

Modes synth plants (--modes takes their codes):
` + modeHelp(),
		Example: `  faultline synth --seed 7 --out corpus/
  faultline synth --seed 7 --traces 30 --modes FM-1.3,FM-3.1 --out corpus/
  faultline analyze corpus/
  faultline synth --seed 7 --score
  faultline synth --examples --out examples/itbench-zero`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			flags := cmd.Flags()
			if examples && (flags.Changed("seed") || flags.Changed("traces") || flags.Changed("modes")) {
				return errors.New("--examples writes the bundled cohort, which takes no --seed, --traces or --modes")
			}
			if out == "" && !score {
				return errors.New("say where to write the corpus with --out DIR, or measure the detectors on one with --score")
			}
			var c *synth.Corpus
			if examples {
				c = synth.Examples()
			} else {
				o := synth.Options{Seed: seed, Traces: traces}
				if flags.Changed("modes") {
					var err error
					if o.Modes, err = synth.ParseModes(modes); err != nil {
						return fmt.Errorf("--modes: %w", err)
					}
				}
				var err error
				if c, err = synth.Generate(o); err != nil {
					return err
				}
			}
			dir := out
			if dir == "" {
				tmp, err := os.MkdirTemp("", "faultline-synth-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				dir = filepath.Join(tmp, "corpus")
			}
			m, err := c.Write(cmd.Context(), dir)
			if err != nil {
				return err
			}
			if out != "" && !a.quiet {
				controls := 0
				for _, t := range m.Traces {
					if t.Control {
						controls++
					}
				}
				fmt.Fprintf(a.stderr, "wrote %d traces (%d controls) to %s; %s says what was planted where\n",
					len(m.Traces), controls, out, filepath.Join(out, synth.ManifestFile))
			}
			if !score {
				if asJSON {
					return writeJSON(a.stdout, m)
				}
				return nil
			}
			sc, err := synth.Measure(cmd.Context(), dir, detect.All)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, sc)
			}
			return sc.WriteTable(a.stdout)
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&seed, "seed", 1, "seed of the corpus")
	f.IntVar(&traces, "traces", synth.DefaultTraces, "number of traces (every third a control)")
	f.StringSliceVar(&modes, "modes", nil, "modes to plant, comma-separated (default all)")
	f.StringVar(&out, "out", "", "directory to write the corpus to")
	f.BoolVar(&examples, "examples", false, "write the bundled example cohort instead")
	f.BoolVar(&score, "score", false, "measure the detectors' recall and false positives on the corpus")
	f.BoolVar(&asJSON, "json", false, "print the scorecard (with --score) or the manifest as JSON")
	return cmd
}

// modeHelp lists the plantable modes with their variants, one per line.
func modeHelp() string {
	var b strings.Builder
	for _, m := range synth.Modes() {
		fmt.Fprintf(&b, "  %-7s %s: %s\n", m, taxonomy.Name(m), strings.Join(synth.Variants(m), ", "))
	}
	return strings.TrimSuffix(b.String(), "\n")
}
