package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/config"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/rules"
	"github.com/faultline/faultline/trace"
)

func (a *app) rulesCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "Check the detectors written as rules in a rule file",
	}
	cmd.AddCommand(a.rulesCheckCommand())
	return cmd
}

func (a *app) rulesCheckCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check [--rules FILE] [PATH...]",
		Short: "Load a rule file, list its rules, and try them on traces",
		Long: `Load a rule file (--rules FILE, else --config, else ./faultline.yaml), report its
mistakes as file:line: what is wrong, and list its rules: name, mode, shape and content
hash. With PATHs, the traces there are read (nothing is stored) and each rule is run over
them: how many traces and steps it matched, how many findings it made. Rules that name a
tool the traces never call are warned about, with the nearest tool name they do call.
Exits non-zero when the file does not load.`,
		Example: `  faultline rules check --rules examples/rules/itbench.yaml
  faultline rules check --rules examples/rules/itbench.yaml ../runs/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			// The rule file is the one every command reads (--rules, else
			// the settings file), but a check of nothing is a mistake.
			set, err := a.ruleSet()
			if err != nil {
				return err
			}
			if set.Path == "" {
				return fmt.Errorf("no rule file: name one with --rules, or put rules in ./%s", config.DefaultFile)
			}
			a.printRules(set)
			if len(args) == 0 {
				return nil
			}
			return a.tryRules(cmd.Context(), set, args)
		},
	}
	return cmd
}

func (a *app) printRules(set *rules.Set) {
	fmt.Fprintf(a.stdout, "%s: %s, %s, hash %s\n", set.Path,
		text.Plural(len(set.Rules), "rule", "rules"), text.Plural(len(set.Codes), "code", "codes"), set.Hash)
	if len(set.Rules) == 0 {
		return
	}
	table := report.Table{Header: []string{"RULE", "MODE", "SHAPE", "HASH", "FINDS"}}
	for _, r := range set.Rules {
		table.Rows = append(table.Rows, []string{r.Name, r.Mode, r.Shape(), r.Detector.Version, strings.TrimSuffix(r.Detector.Summary(), ".")})
	}
	fmt.Fprintln(a.stdout)
	// A table written to the terminal cannot fail in a way worth
	// reporting over the check's own result.
	_ = table.Write(a.stdout)
}

// ruleTally is what one rule matched over the traces read.
type ruleTally struct {
	traces, steps, findings int
}

// ruleSink runs the rules over each trace as it is read, keeping only the
// counts.
type ruleSink struct {
	ds []*detect.Detector

	mu       sync.Mutex
	traces   int
	steps    int
	tools    map[string]int
	tally    map[string]*ruleTally
	rejected []error
}

func (s *ruleSink) File(context.Context, ingest.FileInfo) (ingest.FileSink, error) { return s, nil }
func (s *ruleSink) Close(context.Context, ingest.FileResult) error                 { return nil }

func (s *ruleSink) Trace(_ context.Context, t *trace.Trace) error {
	findings, errs := detect.Run(t, s.ds)
	cited := map[string]map[int]bool{}
	for _, f := range findings {
		if cited[f.Detector] == nil {
			cited[f.Detector] = map[int]bool{}
		}
		for _, i := range f.Steps {
			cited[f.Detector][i] = true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.traces++
	s.steps += len(t.Steps)
	for i := range t.Steps {
		s.tools[t.Steps[i].Tool]++
	}
	for _, f := range findings {
		s.tally[f.Detector].findings++
	}
	for name, steps := range cited {
		s.tally[name].traces++
		s.tally[name].steps += len(steps)
	}
	s.rejected = append(s.rejected, errs...)
	return nil
}

func (a *app) tryRules(ctx context.Context, set *rules.Set, paths []string) error {
	sink := &ruleSink{ds: set.Detectors(), tools: map[string]int{}, tally: map[string]*ruleTally{}}
	for _, d := range sink.ds {
		sink.tally[d.Name] = &ruleTally{}
	}
	printer := newIssuePrinter(a.stderr)
	sum, err := ingest.Paths(ctx, paths, sink, ingest.Options{Report: printer.print, Stdin: a.stdin, Workers: readWorkers()})
	printer.flush()
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "\n%s (%s) read from %s\n\n", text.Plural(sink.traces, "trace", "traces"),
		text.Plural(sink.steps, "step", "steps"), text.Plural(sum.Files, "file", "files"))
	table := report.Table{Header: []string{"RULE", "TRACES", "STEPS", "FINDINGS"}}
	for _, d := range sink.ds {
		n := sink.tally[d.Name]
		table.Rows = append(table.Rows, []string{d.Name, fmt.Sprint(n.traces), fmt.Sprint(n.steps), fmt.Sprint(n.findings)})
	}
	_ = table.Write(a.stdout)
	var warnings []error
	if sink.traces > 0 { // with no trace read, every tool would be "never called"
		warnings = set.Lint(sink.tools)
	}
	sort.SliceStable(sink.rejected, func(i, j int) bool { return sink.rejected[i].Error() < sink.rejected[j].Error() })
	warnings = append(warnings, sink.rejected...)
	if len(warnings) > 0 {
		fmt.Fprintln(a.stdout)
		for _, w := range warnings {
			fmt.Fprintf(a.stdout, "warning: %s\n", report.PrintableLines(w.Error()))
		}
	}
	if sum.Errors > 0 {
		return errDataProblems
	}
	return nil
}
