package eval

import (
	"sort"

	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/stats"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// Raters is the agreement of three or more annotation sources (several
// human labellers, say), mode by mode: Fleiss' kappa over the traces on
// which every rater decided the mode (present or absent). Unlike Agree, no
// side is the reference.
type Raters struct {
	Raters    []string   `json:"raters"` // the sources, as named
	Traces    int        `json:"traces"` // traces with a mode every rater decided
	Bootstrap Bootstrap  `json:"bootstrap"`
	Modes     []RaterRow `json:"modes"` // modes decided by all on some trace, in taxonomy order
	// Overall pools every mode's items (a trace and a mode) into one table.
	Overall *RaterRow `json:"overall"`
}

// RaterRow is the agreement of the raters on one mode (or all, pooled).
type RaterRow struct {
	Mode  string `json:"mode"`
	Name  string `json:"name"`
	Items int    `json:"items"` // traces every rater decided
	// Excluded counts the traces some raters decided and others did not,
	// or left unsure.
	Excluded int `json:"excluded"`
	// Unanimous counts the items on which every rater said the same.
	Unanimous int `json:"unanimous"`
	// Present counts the ratings of present, of Items × raters.
	Present int `json:"present"`
	// Agreement is the mean share of rater pairs that agree on an item
	// (Fleiss' P̄); Kappa corrects it for chance.
	Agreement Metric `json:"agreement"`
	Kappa     Metric `json:"kappa"`
}

// AgreeRaters measures the agreement among the labels of three or more
// raters (it works for two, where Fleiss' kappa is Scott's pi).
func AgreeRaters(byRater []*Labels, opt AgreementOptions) *Raters {
	out := &Raters{Bootstrap: Bootstrap{Replicates: opt.Replicates, Seed: opt.Seed, Level: stats.Level}, Modes: []RaterRow{}}
	traces := map[string]bool{}
	for _, x := range byRater {
		out.Raters = append(out.Raters, x.side.Name)
		for _, id := range x.ids {
			traces[id] = true
		}
	}
	ids := make([]string, 0, len(traces))
	for id := range traces {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	n := len(byRater)
	modes := taxonomy.MAST.Modes
	// present[u][m] is how many raters said present of mode m on trace u,
	// -1 when not every rater decided it.
	var present [][]int
	rows := make([]RaterRow, len(modes))
	for m, mode := range modes {
		rows[m] = RaterRow{Mode: mode.Code, Name: mode.Name}
	}
	for _, id := range ids {
		unit := make([]int, len(modes))
		some := false
		for m, mode := range modes {
			decided, presents, unsure := 0, 0, 0
			for r := range byRater {
				switch byRater[r].get(id, mode.Code).Verdict {
				case trace.Present:
					decided++
					presents++
				case trace.Absent:
					decided++
				case trace.Unsure:
					unsure++
				}
			}
			unit[m] = -1
			switch {
			case decided == n:
				unit[m] = presents
				some = true
			case decided > 0 || unsure > 0:
				rows[m].Excluded++
			}
		}
		if some {
			present = append(present, unit)
		}
	}
	out.Traces = len(present)

	// The table of each mode, and the pooled one last, with the traces
	// weighted by w.
	tables := func(w []int) []*stats.FleissTable {
		ts := make([]*stats.FleissTable, len(modes)+1)
		for i := range ts {
			ts[i] = stats.NewFleissTable(n, 2)
		}
		for u, unit := range present {
			if w[u] == 0 {
				continue
			}
			for m, p := range unit {
				if p < 0 {
					continue
				}
				counts := []int{p, n - p}
				ts[m].Add(counts, w[u])
				ts[len(modes)].Add(counts, w[u])
			}
		}
		return ts
	}
	ones := stats.Once(len(present))
	point := tables(ones)
	var samples [][2][]float64 // by table: agreement, kappa
	if opt.Replicates > 0 && len(present) > 0 {
		samples = make([][2][]float64, len(point))
		stats.Resample(len(present), opt.Replicates, opt.Seed, func(w []int) {
			for i, t := range tables(w) {
				if v, ok := t.Agreement(); ok {
					samples[i][0] = append(samples[i][0], v)
				}
				if v, ok := t.Kappa(); ok {
					samples[i][1] = append(samples[i][1], v)
				}
			}
		})
	}
	fill := func(row *RaterRow, i int) {
		t := point[i]
		for k, f := range []struct {
			metric *Metric
			value  func() (float64, bool)
		}{{&row.Agreement, t.Agreement}, {&row.Kappa, t.Kappa}} {
			v, ok := f.value()
			if !ok {
				continue
			}
			f.metric.Value = stats.Round4(v)
			if samples != nil {
				f.metric.setBootstrap(samples[i][k])
			}
		}
	}
	overall := RaterRow{Mode: "all", Name: "all modes, pooled"}
	for m := range modes {
		for _, unit := range present {
			if p := unit[m]; p >= 0 {
				rows[m].Items++
				rows[m].Present += p
				if p == 0 || p == n {
					rows[m].Unanimous++
				}
			}
		}
		overall.Excluded += rows[m].Excluded
		if rows[m].Items == 0 {
			continue
		}
		fill(&rows[m], m)
		overall.Items += rows[m].Items
		overall.Present += rows[m].Present
		overall.Unanimous += rows[m].Unanimous
		out.Modes = append(out.Modes, rows[m])
	}
	if overall.Items > 0 {
		fill(&overall, len(modes))
		out.Overall = &overall
	}
	return out
}

// Conflict is a trace and mode on which one source says present and the
// other absent.
type Conflict struct {
	Trace  string        `json:"trace"`
	Mode   string        `json:"mode"`
	Source trace.Verdict `json:"source"` // the first side's verdict
	Labels trace.Verdict `json:"labels"` // the second's
	// Steps are the steps the side that says present cites.
	Steps []int `json:"steps"`
}

// Conflicts lists the traces and modes the two sides of a comparison (as
// Agree takes them) decide differently, by mode in taxonomy order, then
// trace.
func Conflicts(src, ref *labels.Set) []Conflict {
	return conflicts(Index(src), Index(ref))
}

func conflicts(sx, rx *Labels) []Conflict {
	rows := sx.sortedRows()
	// Each source row's row among the labels, -1 for none.
	refRow := make([]int32, len(sx.ids))
	for i, id := range sx.ids {
		refRow[i] = -1
		if r, ok := rx.rowOf(id); ok {
			refRow[i] = r
		}
	}
	out := []Conflict{}
	for _, mode := range taxonomy.MAST.Modes {
		sc, rc := sx.column(mode.Code), rx.column(mode.Code)
		if sc < 0 || rc < 0 {
			continue
		}
		for _, row := range rows {
			if refRow[row] < 0 {
				continue
			}
			s, r := sx.at(row, sc), rx.at(refRow[row], rc)
			if c := cellOf(s.Verdict, r.Verdict); c != fp && c != fn {
				continue
			}
			d := Conflict{Trace: sx.ids[row], Mode: mode.Code, Source: s.Verdict, Labels: r.Verdict, Steps: s.Steps}
			if r.Verdict == trace.Present {
				d.Steps = r.Steps
			}
			out = append(out, d)
		}
	}
	return out
}
