package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/text"
)

// noMatch explains a listing that came out empty: the database holds no
// traces, or a filter names a value no trace has (with the stored values
// close to it), or the filters match nothing together.
func noMatch(ctx context.Context, st database, f store.Filter) (string, error) {
	some, err := st.List(ctx, store.Filter{Limit: 1})
	if err != nil {
		return "", err
	}
	if len(some) == 0 {
		return "the database holds no traces; ingest some with: faultline ingest PATH", nil
	}
	var lines []string
	for _, fl := range []struct {
		flag, field string
		values      []string
	}{
		{"--model", "model", f.Model}, {"--system", "system", f.System}, {"--scenario", "scenario", f.Scenario}, {"--trace-format", "format", f.Format},
	} {
		if len(fl.values) == 0 {
			continue
		}
		values, err := st.Values(ctx, fl.field)
		if err != nil {
			return "", err
		}
		for _, want := range fl.values {
			stored := slices.Contains(values, want)
			if fl.field == "model" {
				// A model is found under any of its names.
				stored = slices.ContainsFunc(values, func(v string) bool { return f.Aliases.Canonical(v) == f.Aliases.Canonical(want) })
			}
			if stored {
				continue
			}
			line := fmt.Sprintf("no trace has %s %q", fl.flag, want)
			if near := closeValues(want, values, 5); len(near) > 0 {
				line += "; stored values close to it: " + strings.Join(near, ", ")
			} else {
				line += fmt.Sprintf("; the %d stored values are: %s", len(values), strings.Join(values[:min(len(values), 10)], ", "))
				if len(values) > 10 {
					line += ", ..."
				}
			}
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		if others := otherFilters(f); len(others) == 1 && len(f.Model)+len(f.System)+len(f.Scenario)+len(f.Format) == 0 {
			return "no trace matches " + others[0], nil
		}
		return "no trace matches these filters together, though each matches traces on its own", nil
	}
	return strings.Join(lines, "\n"), nil
}

// otherFilters words the filters set that are not a stored field's value.
func otherFilters(f store.Filter) []string {
	var out []string
	if f.Outcome != "" {
		out = append(out, "--outcome "+f.Outcome)
	}
	for _, m := range f.Modes {
		out = append(out, "--mode "+m)
	}
	if len(f.Sources) > 0 {
		out = append(out, "--source "+strings.Join(f.Sources, ","))
	}
	if f.Search != "" {
		out = append(out, fmt.Sprintf("--search %q", f.Search))
	}
	if len(f.Paths) > 0 {
		out = append(out, "--path "+strings.Join(f.Paths, ","))
	}
	return out
}

// closeValues picks, from values, at most n close to want: those that hold
// it or that it holds (case aside) first, then those a few edits away.
func closeValues(want string, values []string, n int) []string {
	w := strings.ToLower(want)
	type scored struct {
		value string
		score int
	}
	var near []scored
	for _, v := range values {
		lv := strings.ToLower(v)
		switch d := text.Distance(w, lv); {
		case strings.Contains(lv, w) || strings.Contains(w, lv):
			near = append(near, scored{v, 0})
		case d <= max(2, len(w)/3):
			near = append(near, scored{v, d})
		}
	}
	slices.SortStableFunc(near, func(a, b scored) int { return a.score - b.score })
	out := make([]string, 0, n)
	for _, s := range near[:min(len(near), n)] {
		out = append(out, s.value)
	}
	return out
}
