package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/taxonomy"
)

// filterFlag is one trace filter: its flag (and key of judge --where),
// what it keeps, and how a value sets it. Every command that selects
// traces takes its filters from filterFlags, so that a filter has one name
// and one meaning everywhere.
type filterFlag struct {
	name  string
	usage string
	// list filters take several values (comma-separated, or the flag
	// repeated); the others take one.
	list bool
	set  func(f *store.Filter, value string) error
}

// Filter names, for the commands that take some of them.
const (
	filterModel       = "model"
	filterSystem      = "system"
	filterScenario    = "scenario"
	filterTraceFormat = "trace-format"
	filterOutcome     = "outcome"
	filterMode        = "mode"
	filterSource      = "source"
	filterSearch      = "search"
	filterPath        = "path"
	filterLimit       = "limit"
)

var filterFlags = []filterFlag{
	{filterModel, "only traces of this `MODEL`, by its canonical name or any way it is written (openai/gpt-oss-120b is gpt-oss-120b; aliases in faultline.yaml)", true,
		func(f *store.Filter, v string) error { f.Model = append(f.Model, v); return nil }},
	{filterSystem, "only traces of this `SYSTEM` (itbench-zero, ChatDev, ...)", true,
		func(f *store.Filter, v string) error { f.System = append(f.System, v); return nil }},
	{filterScenario, "only traces of this `SCENARIO` (an ITBench incident, a tau-bench task, ...)", true,
		func(f *store.Filter, v string) error { f.Scenario = append(f.Scenario, v); return nil }},
	{filterTraceFormat, "only traces read from this trace `FORMAT` (codex, mad, inspect, otlp-json, ...)", true,
		func(f *store.Filter, v string) error { f.Format = append(f.Format, v); return nil }},
	{filterOutcome, "only traces whose primary outcome is `OUTCOME`: success, failure or unknown (none decided)", false,
		func(f *store.Filter, v string) error {
			if !oneOf(v, store.OutcomeFilters) {
				return fmt.Errorf("must be one of %s, not %q", strings.Join(store.OutcomeFilters, ", "), v)
			}
			f.Outcome = v
			return nil
		}},
	{filterMode, "only traces on which `CODE` (a MAST mode such as FM-1.3 or 1.3, or a SYS code) is present; several: all of them", true,
		func(f *store.Filter, v string) error {
			m, _, ok := taxonomy.Lookup(v)
			if !ok {
				return fmt.Errorf("%q is no MAST mode (FM-1.1 … FM-3.3) or SYS code; faultline modes lists them", v)
			}
			f.Modes = append(f.Modes, m.Code)
			return nil
		}},
	{filterSource, "only traces annotated by `SOURCE` (detector, judge:<model>, human:<name>, or a prefix such as judge): a finding of any verdict, or for detector a run of the detectors; only its findings count, for --mode and in what is reported or written", true,
		func(f *store.Filter, v string) error { f.Sources = append(f.Sources, v); return nil }},
	{filterSearch, "only traces with a step holding these `WORDS` (every word in one step, any order; \"a phrase\"; prefix*)", false,
		func(f *store.Filter, v string) error { f.Search = v; return nil }},
	{filterPath, "only traces ingested from the file `PATH`, or from files under it when it is a directory", true,
		func(f *store.Filter, v string) error { f.Paths = append(f.Paths, v); return nil }},
	{filterLimit, "at most `N` traces", false,
		func(f *store.Filter, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return fmt.Errorf("must be a positive number, not %q", v)
			}
			f.Limit = n
			return nil
		}},
}

// filterNames lists the names of every filter but those excluded.
func filterNames(except ...string) []string {
	var out []string
	for _, ff := range filterFlags {
		if !oneOf(ff.name, except) {
			out = append(out, ff.name)
		}
	}
	return out
}

func lookupFilter(name string) *filterFlag {
	for i := range filterFlags {
		if filterFlags[i].name == name {
			return &filterFlags[i]
		}
	}
	panic("no filter named " + name)
}

// registerFilters adds the named filters to a command as flags that set f.
func registerFilters(cmd *cobra.Command, f *store.Filter, names ...string) {
	for _, name := range names {
		ff := lookupFilter(name)
		cmd.Flags().Var(&filterValue{f: f, flag: ff}, ff.name, ff.usage)
	}
}

// filterValue is a filter as a flag's value.
type filterValue struct {
	f      *store.Filter
	flag   *filterFlag
	values []string
}

func (v *filterValue) String() string { return strings.Join(v.values, ",") }

func (v *filterValue) Type() string {
	if v.flag.list {
		return "strings"
	}
	return "string"
}

func (v *filterValue) Set(s string) error {
	parts := []string{s}
	if v.flag.list {
		parts = strings.Split(s, ",")
	}
	for _, p := range parts {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if err := v.flag.set(v.f, p); err != nil {
			return err
		}
		v.values = append(v.values, p)
	}
	return nil
}

// parseWhere reads judge's --where values, key=value pairs separated by
// commas, whose keys are the filters' names (and format, the old name of
// trace-format, with a notice on w).
func parseWhere(values []string, w io.Writer) (store.Filter, error) {
	var f store.Filter
	seen := map[string]bool{}
	for _, v := range values {
		for _, pair := range strings.Split(v, ",") {
			pair = strings.TrimSpace(pair)
			if pair == "" {
				continue
			}
			key, value, ok := strings.Cut(pair, "=")
			key, value = strings.TrimSpace(key), strings.TrimSpace(value)
			if !ok || value == "" {
				return f, fmt.Errorf("--where: %q is not key=value", pair)
			}
			if key == "format" {
				fmt.Fprintln(w, "--where format= on judge is deprecated: use trace-format=")
				key = filterTraceFormat
			}
			if !oneOf(key, filterNames()) {
				return f, fmt.Errorf("--where: unknown key %q (use %s)", key, strings.Join(filterNames(), ", "))
			}
			ff := lookupFilter(key)
			if seen[key] && !ff.list {
				return f, fmt.Errorf("--where: %s given twice", key)
			}
			seen[key] = true
			if err := ff.set(&f, value); err != nil {
				return f, fmt.Errorf("--where: %s %w", key, err)
			}
		}
	}
	return f, nil
}

// filtered says whether a filter keeps fewer than every trace.
func filtered(f store.Filter) bool {
	return f.Model != nil || f.System != nil || f.Scenario != nil || f.Format != nil || f.Outcome != "" ||
		len(f.Sources) > 0 || len(f.Modes) > 0 || f.Search != "" || len(f.Paths) > 0 || f.Select != nil || f.Limit > 0
}

// deprecatedFor annotates a flag kept under an old name with its new one.
const deprecatedFor = "faultline-deprecated-for"

// deprecatedAlias keeps the old name of a renamed flag working: hidden,
// setting the same value, and noticed on stderr when used (see
// noticeDeprecated).
func deprecatedAlias(cmd *cobra.Command, old, current string) {
	fl := cmd.Flags().Lookup(current)
	alias := cmd.Flags().VarPF(fl.Value, old, "", "deprecated: use --"+current)
	alias.Hidden = true
	alias.Annotations = map[string][]string{deprecatedFor: {current}}
}

// noticeDeprecated prints one line for each flag given by an old name.
func noticeDeprecated(cmd *cobra.Command, w io.Writer) {
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if to := fl.Annotations[deprecatedFor]; len(to) > 0 {
			fmt.Fprintf(w, "--%s on %s is deprecated: use --%s\n", fl.Name, cmd.Name(), to[0])
		}
	})
}
