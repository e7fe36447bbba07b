package web

import (
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/report"
)

// The dashboard's first figures: the commonest fatal mode (or why there
// is none) and the mode whose share differs most between two groups large
// enough to compare.
func TestHeadline(t *testing.T) {
	mode := func(code, class string, all, failed analyze.Proportion) *analyze.ModeStats {
		return &analyze.ModeStats{Mode: code, Name: "name of " + code, Class: class, All: all, Failed: failed}
	}
	p := func(k, n int) analyze.Proportion { return analyze.Proportion{K: k, N: n} }
	group := func(name string, traces, failed, succeeded int, modes ...*analyze.ModeStats) *analyze.Group {
		return &analyze.Group{Name: name, Traces: traces, Failed: failed, Succeeded: succeeded, Modes: modes,
			SuccessRate: p(succeeded, failed+succeeded)}
	}
	tests := []struct {
		name             string
		groups           []*analyze.Group
		all              *analyze.Group
		fatal, noFatal   string // the fatal mode, or words of why none
		spread, noSpread string // the mode, or words of why none
		high, low        string
		points           float64
		ties             int // other modes as far apart
	}{
		{
			name: "the fatal mode in most failures; the widest gap",
			groups: []*analyze.Group{
				group("a", 10, 5, 5, mode("FM-1.3", "", p(1, 10), p(1, 5)), mode("FM-3.1", "", p(8, 10), p(5, 5))),
				group("b", 10, 5, 5, mode("FM-1.3", "", p(6, 10), p(4, 5))),
				group("tiny", 2, 1, 1, mode("FM-2.3", "", p(2, 2), p(1, 1))), // too small to count in the spread
			},
			all: group("all", 22, 11, 11, mode("FM-1.3", analyze.Fatal, p(7, 22), p(5, 11)), mode("FM-2.3", analyze.Inconclusive, p(2, 22), p(1, 11)),
				mode("FM-3.1", analyze.Fatal, p(8, 22), p(5, 11))),
			fatal: "FM-1.3", spread: "FM-3.1", high: "a", low: "b", points: 80,
		},
		{
			name:    "no outcomes; one group",
			groups:  []*analyze.Group{group("a", 10, 0, 0, mode("FM-1.3", "", p(1, 10), p(0, 0)))},
			all:     group("all", 10, 0, 0, mode("FM-1.3", analyze.TooFewEither, p(1, 10), p(0, 0))),
			noFatal: "no trace has an outcome", noSpread: "needs two models with at least 4 traces",
		},
		{
			name: "too few failures to call; equal shares everywhere",
			groups: []*analyze.Group{
				group("a", 10, 2, 8, mode("FM-1.3", "", p(5, 10), p(1, 2))),
				group("b", 10, 2, 8, mode("FM-1.3", "", p(5, 10), p(1, 2))),
			},
			all:     group("all", 20, 4, 16, mode("FM-1.3", analyze.TooFewFailed, p(10, 20), p(2, 4))),
			noFatal: "4 failed and 16 successful traces, where the rule needs 5 failed", noSpread: "no MAST mode's share differs",
		},
		{
			name: "enough outcomes, nothing fatal; a tie goes to taxonomy order",
			groups: []*analyze.Group{
				group("a", 10, 5, 5, mode("FM-1.1", "", p(5, 10), p(3, 5)), mode("FM-2.2", "", p(5, 10), p(3, 5))),
				group("b", 10, 5, 5),
			},
			all:     group("all", 20, 10, 10, mode("FM-1.1", analyze.Inconclusive, p(5, 20), p(3, 10)), mode("FM-2.2", analyze.NonFatal, p(5, 20), p(3, 10))),
			noFatal: "no mode is significantly more common", spread: "FM-1.1", high: "a", low: "b", points: 50, ties: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &analyze.Report{By: "model", Groups: tt.groups, All: tt.all, Traces: tt.all.Traces, Rule: analyze.DefaultRule}
			h := headlineOf(r, func(report.Traces) string { return "/traces?x" })
			switch {
			case tt.fatal != "":
				if h.Fatal == nil || h.Fatal.Mode != tt.fatal || h.Fatal.Link == "" {
					t.Errorf("fatal %+v, want %s", h.Fatal, tt.fatal)
				}
			case h.Fatal != nil || !strings.Contains(h.NoFatal, tt.noFatal):
				t.Errorf("fatal %+v, %q; want none, saying %q", h.Fatal, h.NoFatal, tt.noFatal)
			}
			switch {
			case tt.spread != "":
				if s := h.Spread; s == nil || s.Mode != tt.spread || s.HighName != tt.high || s.LowName != tt.low || s.Points() != tt.points || s.Ties != tt.ties {
					t.Errorf("spread %+v, want %s from %s to %s, %v points, %d ties", s, tt.spread, tt.high, tt.low, tt.points, tt.ties)
				}
			case h.Spread != nil || !strings.Contains(h.NoSpread, tt.noSpread):
				t.Errorf("spread %+v, %q; want none, saying %q", h.Spread, h.NoSpread, tt.noSpread)
			}
		})
	}
}
