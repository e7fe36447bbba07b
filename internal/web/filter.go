package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/report"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/rules"
	"github.com/faultline/faultline/taxonomy"
)

// filter is what the dashboard, the trace list and the labelling queue
// select traces by, read from and written to the address, so that every
// view of a selection can be linked to.
type filter struct {
	Model, System, Scenario, Format string
	Outcome                         string // success, failure, unknown
	// Source keeps the traces an annotation source annotated and selects
	// the sources that count, as --source does on the command line: a
	// name, or a prefix such as judge or human.
	Source string
	// Modes must all be present (by Source), ModeCount the number of
	// distinct MAST modes ("" for any).
	Modes     []string
	ModeCount string
	Search    string
	// Todo keeps the traces the current labeller has not labelled.
	Todo bool
	Sort string
	Desc bool
}

// fieldNames are the trace fields a filter and a report group take.
var fieldNames = []string{"model", "system", "scenario", "format"}

// params name the filters in an address as the command line's flags name
// them (ls --trace-format, --search), with the older names read too: links
// and forms made before keep working.
var params = map[string]struct{ name, old string }{
	"format": {"trace-format", "format"},
	"search": {"search", "q"},
}

// param is the name of a filter in an address.
func param(field string) string {
	if p, ok := params[field]; ok {
		return p.name
	}
	return field
}

// get reads a filter from an address under its name, or its older one.
func get(q url.Values, field string) string {
	if v := q.Get(param(field)); v != "" {
		return v
	}
	if p, ok := params[field]; ok {
		return q.Get(p.old)
	}
	return ""
}

func (f *filter) field(name string) *string {
	switch name {
	case "model":
		return &f.Model
	case "system":
		return &f.System
	case "scenario":
		return &f.Scenario
	}
	return &f.Format
}

// parseFilter reads a filter from a request's address.
func parseFilter(r *http.Request) (filter, error) {
	q := r.URL.Query()
	f := filter{Outcome: q.Get("outcome"), Source: q.Get("source"), ModeCount: q.Get("modes"), Search: strings.TrimSpace(get(q, "search")),
		Todo: q.Get("todo") != "", Sort: q.Get("sort"), Desc: q.Get("desc") != ""}
	for _, name := range fieldNames {
		*f.field(name) = get(q, name)
	}
	if f.Outcome != "" && !slices.Contains(store.OutcomeFilters, f.Outcome) {
		return f, badRequestf("outcome %q: use one of %s", f.Outcome, strings.Join(store.OutcomeFilters, ", "))
	}
	for _, m := range q["mode"] {
		if m == "" {
			continue
		}
		if _, _, ok := taxonomy.Lookup(m); !ok && !rules.IsCustomCode(m) {
			return f, badRequestf("mode %q: use a MAST (FM-1.1 … FM-3.3) or SYS code, or a code of your rules", m)
		}
		f.Modes = append(f.Modes, m)
	}
	if f.ModeCount != "" {
		if n, err := strconv.Atoi(f.ModeCount); err != nil || n < 0 {
			return f, badRequestf("modes %q: a number of modes, from 0", f.ModeCount)
		}
	}
	if f.Sort != "" && !slices.Contains(store.SortOrders, f.Sort) {
		return f, badRequestf("sort %q: use one of %s", f.Sort, strings.Join(store.SortOrders, ", "))
	}
	return f, nil
}

// values is the filter as address parameters (empty ones left out).
func (f filter) values() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	for _, name := range fieldNames {
		set(param(name), *f.field(name))
	}
	set("outcome", f.Outcome)
	set("source", f.Source)
	set("modes", f.ModeCount)
	set(param("search"), f.Search)
	set("sort", f.Sort)
	if f.Desc {
		q.Set("desc", "1")
	}
	if f.Todo {
		q.Set("todo", "1")
	}
	if len(f.Modes) > 0 {
		q["mode"] = slices.Clone(f.Modes)
	}
	return q
}

// encode is the filter as an address's query.
func (f filter) encode() string { return f.values().Encode() }

// sources is the source selection as the store and analyze take it.
func (f filter) sources() []string {
	if f.Source == "" {
		return nil
	}
	return []string{f.Source}
}

// query is the store query of the filter; labeller is the current
// labeller's source, for Todo, and aliases name models canonically.
func (f filter) query(labeller string, aliases store.ModelAliases) store.TraceQuery {
	q := store.TraceQuery{Outcome: f.Outcome, Sources: f.sources(), Modes: f.Modes, Search: f.Search, Sort: f.Sort, Desc: f.Desc, Aliases: aliases}
	match := func(v string) []string {
		switch v {
		case "":
			return nil
		case analyze.UnknownGroup:
			// The report's group of traces without the field.
			return []string{"", analyze.UnknownGroup}
		}
		return []string{v}
	}
	q.Model, q.System, q.Scenario, q.Format = match(f.Model), match(f.System), match(f.Scenario), match(f.Format)
	if n, err := strconv.Atoi(f.ModeCount); err == nil {
		q.ModeCount = &n
	}
	if f.Todo && labeller != "" {
		q.Unlabelled = labeller
	}
	return q
}

// narrowed is the filter further narrowed to the traces behind a figure
// of a report grouped by by; false when the figure asks for traces the
// filter has left out (the successes of a report on failures), which are
// none of the figure's.
func (f filter) narrowed(by string, t report.Traces) (filter, bool) {
	out := f
	out.Modes = slices.Clone(f.Modes)
	if t.Group != "" {
		*out.field(by) = t.Group
	}
	if t.Outcome != "" {
		if f.Outcome != "" && f.Outcome != t.Outcome {
			return out, false
		}
		out.Outcome = t.Outcome
	}
	for _, m := range t.Modes {
		if !slices.Contains(out.Modes, m) {
			out.Modes = append(out.Modes, m)
		}
	}
	if t.ModeCount != nil {
		if f.ModeCount != "" && f.ModeCount != strconv.Itoa(*t.ModeCount) {
			return out, false
		}
		out.ModeCount = strconv.Itoa(*t.ModeCount)
	}
	return out, true
}

// maxMenu is the most values a filter menu offers; a field with more is
// typed in.
const maxMenu = 500

// menus are the choices of a filter form.
type menus struct {
	Models, Systems, Scenarios, Formats, Sources []string
	Outcomes                                     []string
	Modes                                        []taxonomy.Mode
}

func (s *Server) menus(r *http.Request) (menus, error) {
	ctx := r.Context()
	m := menus{Outcomes: store.OutcomeFilters, Modes: taxonomy.MAST.Modes}
	var err error
	for _, field := range []struct {
		name string
		dst  *[]string
	}{{"model", &m.Models}, {"system", &m.Systems}, {"scenario", &m.Scenarios}, {"format", &m.Formats}} {
		if *field.dst, err = s.cfg.Store.Values(ctx, field.name); err != nil {
			return m, err
		}
		if len(*field.dst) > maxMenu {
			*field.dst = nil // typed in instead
		}
	}
	m.Models = canonicalModels(m.Models, s.cfg.Aliases)
	sources, err := s.cfg.Store.AllSources(ctx)
	if err != nil {
		return m, err
	}
	m.Sources = withPrefixes(sources)
	return m, nil
}

// canonicalModels names each model once, by its canonical name, as the
// dashboard groups them: choosing it selects every way it is written.
func canonicalModels(models []string, aliases store.ModelAliases) []string {
	if models == nil {
		return nil
	}
	out := make([]string, 0, len(models))
	for _, m := range models {
		out = append(out, aliases.Canonical(m))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// withPrefixes lists the sources and, before them, each prefix that more
// than one source shares (human, judge, mad), which selects them all.
func withPrefixes(sources []string) []string {
	count := map[string]int{}
	for _, s := range sources {
		if p, _, ok := strings.Cut(s, ":"); ok {
			count[p]++
		}
	}
	var out []string
	for _, s := range sources {
		p, _, _ := strings.Cut(s, ":")
		if count[p] > 1 && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return append(out, sources...)
}
