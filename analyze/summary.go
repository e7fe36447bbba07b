// Package analyze turns a cohort of stored traces into statistics: who was
// run, how it went, and which failure modes were found, per group.
package analyze

import (
	"context"
	"sort"

	"github.com/faultline/faultline/store"
	"github.com/faultline/faultline/taxonomy"
)

// Summary is the per-model overview `faultline analyze` prints.
type Summary struct {
	Traces int `json:"traces"`
	// Sources are the annotation sources counted in Modes.
	Sources []string       `json:"sources"`
	Models  []ModelSummary `json:"models"`
	Total   ModelSummary   `json:"total"`
}

// ModelSummary describes the traces of one model.
type ModelSummary struct {
	Model     string `json:"model"`
	Traces    int    `json:"traces"`
	Succeeded int    `json:"succeeded"`
	Failed    int    `json:"failed"`
	Unscored  int    `json:"unscored"` // no decided outcome
	// WithModes counts traces with at least one mode present.
	WithModes int `json:"with_modes"`
	// Modes maps a mode code to the number of traces it was found in.
	Modes map[string]int `json:"modes"`
}

// Summarize builds the overview of the given traces, counting the modes
// that the selected annotation sources (all when empty) marked present.
func Summarize(ctx context.Context, st *store.Store, traces []store.Summary, sources []string) (*Summary, error) {
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
	sum := &Summary{Traces: len(traces), Sources: used, Total: ModelSummary{Model: "all", Modes: map[string]int{}}}
	byModel := map[string]*ModelSummary{}
	for _, t := range traces {
		name := t.Model
		if name == "" {
			name = "(unknown)"
		}
		m := byModel[name]
		if m == nil {
			m = &ModelSummary{Model: name, Modes: map[string]int{}}
			byModel[name] = m
		}
		for _, agg := range []*ModelSummary{m, &sum.Total} {
			agg.Traces++
			switch {
			case t.Outcome == nil || t.Outcome.Success == nil:
				agg.Unscored++
			case *t.Outcome.Success:
				agg.Succeeded++
			default:
				agg.Failed++
			}
			if len(present[t.ID]) > 0 {
				agg.WithModes++
			}
			for mode := range present[t.ID] {
				agg.Modes[mode]++
			}
		}
	}
	for _, m := range byModel {
		sum.Models = append(sum.Models, *m)
	}
	sort.Slice(sum.Models, func(i, j int) bool { return sum.Models[i].Model < sum.Models[j].Model })
	return sum, nil
}

// ModesSeen lists the codes found anywhere in the summary, in taxonomy order
// (codes outside the taxonomy last).
func (s *Summary) ModesSeen() []string {
	var out []string
	for _, m := range taxonomy.MAST.Modes {
		if s.Total.Modes[m.Code] > 0 {
			out = append(out, m.Code)
		}
	}
	var extra []string
	for code := range s.Total.Modes {
		if _, ok := taxonomy.MAST.Mode(code); !ok {
			extra = append(extra, code)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}
