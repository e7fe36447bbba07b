// Command discoverbench measures faultline discover against a synthetic
// corpus's manifest (planted.json): for every pattern, the planted mode
// most of its traces carry and its purity (the share of its traces that
// carry it); for every planted mode, the patterns it is the majority of,
// their purity (weighted by traces) and its coverage (the share of the
// traces planted with it that fall in one of them), of all its traces and
// of its failed ones (discover groups failures: a mode that never makes a
// run fail makes no pattern).
//
//	faultline discover --json > patterns.json
//	faultline ls --json > traces.json
//	discoverbench -patterns patterns.json -planted corpus/planted.json -traces traces.json
package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"text/tabwriter"
)

type manifest struct {
	Traces []struct {
		ID      string `json:"id"`
		Control bool   `json:"control"`
		Planted []struct {
			Mode string `json:"mode"`
		} `json:"planted"`
	} `json:"traces"`
}

type result struct {
	Failed, Succeeded int
	Patterns          []struct {
		ID       string `json:"id"`
		Kind     string `json:"kind"`
		Key      string `json:"key"`
		Template string `json:"template"`
		Traces   []struct {
			ID     string `json:"id"`
			Failed bool   `json:"failed"`
		} `json:"traces"`
	} `json:"patterns"`
}

// none is the "mode" of a control or of a trace planted with nothing.
const none = "(none planted)"

func main() {
	patternsPath := flag.String("patterns", "", "faultline discover --json output")
	plantedPath := flag.String("planted", "", "the corpus's planted.json")
	tracesPath := flag.String("traces", "", "faultline ls --json output: which traces failed")
	verbose := flag.Bool("v", false, "list every pattern")
	flag.Parse()
	if err := run(os.Stdout, *patternsPath, *plantedPath, *tracesPath, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "discoverbench:", err)
		os.Exit(1)
	}
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func run(w io.Writer, patternsPath, plantedPath, tracesPath string, verbose bool) error {
	var m manifest
	var res result
	var listed []struct {
		ID      string `json:"id"`
		Outcome *struct {
			Success *bool `json:"success"`
		} `json:"outcome"`
	}
	for path, v := range map[string]any{plantedPath: &m, patternsPath: &res, tracesPath: &listed} {
		if err := readJSON(path, v); err != nil {
			return err
		}
	}
	failed := map[string]bool{}
	for _, t := range listed {
		failed[t.ID] = t.Outcome != nil && t.Outcome.Success != nil && !*t.Outcome.Success
	}
	modes := map[string][]string{} // by trace id
	planted := map[string]int{}    // traces by mode
	plantedFailed := map[string]int{}
	for _, t := range m.Traces {
		var ms []string
		for _, p := range t.Planted {
			if !slices.Contains(ms, p.Mode) {
				ms = append(ms, p.Mode)
			}
		}
		if len(ms) == 0 {
			ms = []string{none}
		}
		modes[t.ID] = ms
		for _, mode := range ms {
			planted[mode]++
			if failed[t.ID] {
				plantedFailed[mode]++
			}
		}
	}
	type byMode struct {
		patterns     int
		traces, pure int             // summed over its patterns, for the weighted purity
		covered      map[string]bool // its traces in one of its patterns
	}
	stats := map[string]*byMode{}
	for mode := range planted {
		stats[mode] = &byMode{covered: map[string]bool{}}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if verbose {
		fmt.Fprintln(tw, "pattern\tkind\ttraces\tmajority\tpurity\tsignature")
	}
	for _, p := range res.Patterns {
		count := map[string]int{}
		for _, t := range p.Traces {
			for _, mode := range modes[t.ID] {
				count[mode]++
			}
		}
		if len(p.Traces) == 0 {
			continue
		}
		majority := ""
		for mode, n := range count {
			if majority == "" || n > count[majority] || (n == count[majority] && mode < majority) {
				majority = mode
			}
		}
		s := stats[majority]
		s.patterns++
		s.traces += len(p.Traces)
		s.pure += count[majority]
		for _, t := range p.Traces {
			if slices.Contains(modes[t.ID], majority) {
				s.covered[t.ID] = true
			}
		}
		if verbose {
			sig := p.Template
			if p.Key != "" {
				sig = p.Key + ": " + sig
			}
			if len(sig) > 70 {
				sig = sig[:69] + "…"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.0f%%\t%s\n", p.ID, p.Kind, len(p.Traces), majority, 100*float64(count[majority])/float64(len(p.Traces)), sig)
		}
	}
	if verbose {
		fmt.Fprintln(tw)
	}
	fmt.Fprintln(tw, "planted mode\ttraces\tfailed\tpatterns (majority)\tpurity\tcoverage\tof failed")
	order := make([]string, 0, len(planted))
	for mode := range planted {
		order = append(order, mode)
	}
	slices.SortFunc(order, func(a, b string) int { return cmp.Compare(a, b) })
	for _, mode := range order {
		s := stats[mode]
		purity := "-"
		if s.traces > 0 {
			purity = fmt.Sprintf("%.0f%%", 100*float64(s.pure)/float64(s.traces))
		}
		coveredFailed := 0
		for id := range s.covered {
			if failed[id] {
				coveredFailed++
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\n", mode, planted[mode], plantedFailed[mode], s.patterns, purity,
			percent(len(s.covered), planted[mode]), percent(coveredFailed, plantedFailed[mode]))
	}
	return tw.Flush()
}

func percent(k, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(k)/float64(n))
}
