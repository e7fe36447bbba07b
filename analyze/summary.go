// Package analyze turns a cohort of stored traces into statistics: who was
// run, how it went, and which failure modes were found, per group.
package analyze

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/faultline/faultline/store"
	"github.com/faultline/faultline/taxonomy"
)

// Groupings a summary can be made by.
var Groupings = []string{"model", "system", "scenario"}

// Summary is the per-group overview `faultline analyze` prints.
type Summary struct {
	// By names what the groups are: model, system or scenario.
	By     string `json:"by"`
	Traces int    `json:"traces"`
	// Sources are the annotation sources counted in Modes.
	Sources []string `json:"sources"`
	Groups  []Group  `json:"groups"`
	Total   Group    `json:"total"`
}

// Group describes the traces of one model (or system, or scenario).
type Group struct {
	Name      string `json:"name"`
	Traces    int    `json:"traces"`
	Succeeded int    `json:"succeeded"`
	Failed    int    `json:"failed"`
	Unscored  int    `json:"unscored"` // no decided outcome
	// WithModes counts traces with at least one MAST mode present.
	WithModes int `json:"with_modes"`
	// Modes maps a MAST mode code to the number of traces it was found in.
	Modes map[string]int `json:"modes"`
	// WithSystem counts traces with a harness or infrastructure failure
	// (SYS codes), and System maps each such code to its traces: kept apart
	// so that they do not read as failures of the agent.
	WithSystem int            `json:"with_system"`
	System     map[string]int `json:"system"`
}

// Summarize builds the overview of the given traces grouped by model, system
// or scenario, counting the modes that the selected annotation sources (all
// when empty) marked present.
func Summarize(ctx context.Context, st *store.Store, traces []store.Summary, by string, sources []string) (*Summary, error) {
	key, err := groupKey(by)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(traces))
	for i, t := range traces {
		ids[i] = t.ID
	}
	present, err := st.PresentModes(ctx, ids, sources)
	if err != nil {
		return nil, err
	}
	all, err := st.Sources(ctx, ids)
	if err != nil {
		return nil, err
	}
	var used []string
	for _, src := range all {
		if store.MatchSource(src, sources) {
			used = append(used, src)
		}
	}
	sum := &Summary{By: by, Traces: len(traces), Sources: used, Total: newGroup("all")}
	groups := map[string]*Group{}
	for _, t := range traces {
		name := key(t)
		if name == "" {
			name = "(unknown)"
		}
		g := groups[name]
		if g == nil {
			ng := newGroup(name)
			g = &ng
			groups[name] = g
		}
		for _, agg := range []*Group{g, &sum.Total} {
			agg.Traces++
			switch {
			case t.Outcome == nil || t.Outcome.Success == nil:
				agg.Unscored++
			case *t.Outcome.Success:
				agg.Succeeded++
			default:
				agg.Failed++
			}
			mast, system := 0, 0
			for mode := range present[t.ID] {
				if taxonomy.IsMAST(mode) {
					agg.Modes[mode]++
					mast++
				} else {
					agg.System[mode]++
					system++
				}
			}
			if mast > 0 {
				agg.WithModes++
			}
			if system > 0 {
				agg.WithSystem++
			}
		}
	}
	for _, g := range groups {
		sum.Groups = append(sum.Groups, *g)
	}
	sort.Slice(sum.Groups, func(i, j int) bool { return sum.Groups[i].Name < sum.Groups[j].Name })
	return sum, nil
}

func groupKey(by string) (func(store.Summary) string, error) {
	switch by {
	case "model", "":
		return func(t store.Summary) string { return t.Model }, nil
	case "system":
		return func(t store.Summary) string { return t.System }, nil
	case "scenario":
		return func(t store.Summary) string { return t.Scenario }, nil
	}
	return nil, fmt.Errorf("cannot group by %q: use one of %s", by, strings.Join(Groupings, ", "))
}

func newGroup(name string) Group {
	return Group{Name: name, Modes: map[string]int{}, System: map[string]int{}}
}

// ModesSeen lists the MAST modes found anywhere in the summary, in taxonomy order.
func (s *Summary) ModesSeen() []string { return seen(taxonomy.MAST, s.Total.Modes) }

// SystemSeen lists the harness and infrastructure failure codes found, in
// their taxonomy's order; codes known to neither taxonomy come last.
func (s *Summary) SystemSeen() []string {
	out := seen(taxonomy.System, s.Total.System)
	var unknown []string
	for code := range s.Total.System {
		if _, _, ok := taxonomy.Lookup(code); !ok {
			unknown = append(unknown, code)
		}
	}
	sort.Strings(unknown)
	return append(out, unknown...)
}

func seen(t *taxonomy.Taxonomy, counts map[string]int) []string {
	var out []string
	for _, m := range t.Modes {
		if counts[m.Code] > 0 {
			out = append(out, m.Code)
		}
	}
	return out
}
