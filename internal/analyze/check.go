package analyze

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/faultline/faultline/taxonomy"
)

// ReadReport reads a cohort report in its JSON form, as `faultline report
// --format json` writes it or inside the "report" field of `faultline
// analyze --json`. It refuses another schema version, whose fields may not
// mean what this one's do.
func ReadReport(r io.Reader) (*Report, error) {
	var doc struct {
		Report
		Wrapped *Report `json:"report"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("not a faultline report: %w", err)
	}
	rep := &doc.Report
	if doc.Wrapped != nil {
		rep = doc.Wrapped
	}
	switch {
	case rep.Schema == "":
		return nil, errors.New(`not a faultline report: no "schema" field`)
	case rep.Schema != ReportSchema:
		return nil, fmt.Errorf("report schema %q: this faultline reads %q", rep.Schema, ReportSchema)
	case rep.All == nil:
		return nil, errors.New(`not a faultline report: no "all" group`)
	}
	return rep, nil
}

// Limits are how far a figure may rise against the baseline before a
// check fails.
type Limits struct {
	// Prevalence is the largest allowed rise of a mode's share of traces,
	// in absolute terms (0.05: five percentage points).
	Prevalence float64
	// Density is the largest allowed rise of the mean number of distinct
	// MAST modes per failed trace.
	Density float64
}

// CheckResult compares a report with a baseline, figure by figure.
type CheckResult struct {
	Limits Limits `json:"limits"`
	// Checked counts the figures compared.
	Checked int `json:"checked"`
	// Rises are the figures that went up, past the limit or not, largest
	// excess over the limit first.
	Rises []Rise `json:"rises"`
	// Missing lists baseline groups with no traces now; New the groups
	// that the baseline lacks. Neither is checked.
	Missing []string `json:"missing"`
	New     []string `json:"new"`
}

// Rise is one figure that went up.
type Rise struct {
	Group    string  `json:"group"`
	Measure  string  `json:"measure"` // a mode's code, or "density"
	Name     string  `json:"name"`
	Baseline float64 `json:"baseline"`
	Current  float64 `json:"current"`
	Limit    float64 `json:"limit"`
	// Baseline and current counts of a mode's prevalence, k of n.
	BaselineCount *Proportion `json:"baseline_count,omitempty"`
	CurrentCount  *Proportion `json:"current_count,omitempty"`
	Regression    bool        `json:"regression"` // rose by more than Limit
}

// Regressions counts the rises past their limit.
func (c *CheckResult) Regressions() int {
	n := 0
	for _, r := range c.Rises {
		if r.Regression {
			n++
		}
	}
	return n
}

// Check compares the current report with a baseline: in every group both
// have (and in the whole cohort), each MAST mode's share of traces and the
// failure density. They must have been made alike (same grouping, same
// source selection), or the figures would not measure the same thing.
func Check(baseline, current *Report, limits Limits) (*CheckResult, error) {
	if baseline.By != current.By {
		return nil, fmt.Errorf("the baseline groups by %s, this report by %s", baseline.By, current.By)
	}
	if strings.Join(baseline.SourceSelection, ",") != strings.Join(current.SourceSelection, ",") {
		return nil, fmt.Errorf("the baseline counts sources %q, this report %q", baseline.SourceSelection, current.SourceSelection)
	}
	res := &CheckResult{Limits: limits, Rises: []Rise{}, Missing: []string{}, New: []string{}}
	now := map[string]*Group{current.All.Name: current.All}
	for _, g := range current.Groups {
		now[g.Name] = g
	}
	was := map[string]bool{}
	for _, b := range append(append([]*Group{}, baseline.Groups...), baseline.All) {
		was[b.Name] = true
		c := now[b.Name]
		if c == nil {
			res.Missing = append(res.Missing, b.Name)
			continue
		}
		res.checkGroup(b, c)
	}
	for _, g := range current.Groups {
		if !was[g.Name] {
			res.New = append(res.New, g.Name)
		}
	}
	sortRises(res.Rises)
	return res, nil
}

func (res *CheckResult) checkGroup(b, c *Group) {
	for _, m := range taxonomy.MAST.Modes {
		pb, pc := b.Mode(m.Code).All, c.Mode(m.Code).All
		sb, okB := pb.Share()
		sc, okC := pc.Share()
		if !okB || !okC {
			continue
		}
		res.Checked++
		if sc > sb {
			res.Rises = append(res.Rises, Rise{Group: b.Name, Measure: m.Code, Name: m.Name, Baseline: sb, Current: sc,
				Limit: res.Limits.Prevalence, BaselineCount: &pb, CurrentCount: &pc, Regression: sc-sb > res.Limits.Prevalence+1e-9})
		}
	}
	db, dc := b.Density.Failed.Value, c.Density.Failed.Value
	if db == nil || dc == nil {
		return
	}
	res.Checked++
	if *dc > *db {
		res.Rises = append(res.Rises, Rise{Group: b.Name, Measure: "density", Name: "MAST modes per failed trace", Baseline: *db, Current: *dc,
			Limit: res.Limits.Density, Regression: *dc-*db > res.Limits.Density+1e-9})
	}
}

// sortRises puts regressions first, then the rises closest to their limit.
func sortRises(rises []Rise) {
	excess := func(r Rise) float64 { return (r.Current - r.Baseline) - r.Limit }
	sort.SliceStable(rises, func(i, j int) bool { return excess(rises[i]) > excess(rises[j]) })
}
