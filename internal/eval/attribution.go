package eval

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/stats"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// Failure attribution, as the Who&When benchmark measures it: a failed run
// is labelled with its decisive error, the agent and the step at which it
// went irrecoverably wrong, and a method is scored on how often it names
// that agent (agent-level accuracy) and that step (step-level accuracy).
// Any annotation source can be read as such a method: its earliest located
// finding, of whatever mode, is where it says the run went wrong.

// The best results published on Who&When, for comparison: the share of
// runs whose decisive agent, and whose decisive step, a method names.
const (
	WhoWhenBestAgent = 0.535
	WhoWhenBestStep  = 0.142
)

// Attribution is how well a source locates the decisive errors of the
// traces labelled with one.
type Attribution struct {
	Source string `json:"source"`
	// Labels are the sources of the decisive-error labels.
	Labels []string `json:"labels"`
	// Traces counts the traces with a decisive-error label that cites a
	// step; Attributed those of them the source located a finding on.
	Traces     int `json:"traces"`
	Attributed int `json:"attributed"`
	// Bootstrap holds the agreement's settings; its intervals, of shares
	// of traces, are Wilson's, and none when Replicates is 0.
	Bootstrap Bootstrap `json:"bootstrap"`
	// Within is the tolerance, in steps, of Near.
	Within int `json:"within"`
	// Agent, Step and Near are the shares of Traces on which the source's
	// earliest located finding is at a step of the labelled agent, at the
	// labelled step, and at most Within steps from it. A trace the source
	// located nothing on counts as a miss: the benchmark's methods always
	// name an agent and a step.
	Agent Share            `json:"agent"`
	Step  Share            `json:"step"`
	Near  Share            `json:"near"`
	Rows  []AttributionRow `json:"rows"`
}

// Share is how many traces a source got right, and which share of them.
type Share struct {
	Correct int `json:"correct"`
	Metric
}

// AttributionRow is one labelled trace.
type AttributionRow struct {
	Trace      string `json:"trace"`
	LabelAgent string `json:"label_agent"`
	LabelStep  int    `json:"label_step"`
	// Mode, Agent and Step describe the source's earliest located finding:
	// its mode, the agent of its first cited step, and that step (null when
	// the source located nothing).
	Mode     string `json:"mode,omitempty"`
	Agent    string `json:"agent,omitempty"`
	Step     *int   `json:"step"`
	AgentHit bool   `json:"agent_hit"`
	StepHit  bool   `json:"step_hit"`
	NearHit  bool   `json:"near_hit"`
}

// StepReader is what attribution reads from a store: the decisive-error
// labels of every trace compared, in one pass, then the header and
// findings and a few steps of the traces that have one.
type StepReader interface {
	// EachFinding calls fn with each finding q selects on the given traces.
	EachFinding(ctx context.Context, ids []string, q store.FindingQuery, fn func(store.TraceFinding) error) error
	// LoadHeader returns a trace with its findings and outcomes but no
	// steps, and its step count.
	LoadHeader(ctx context.Context, id string) (*trace.Trace, int, error)
	StepsAt(ctx context.Context, id string, idx []int) ([]trace.Step, error)
}

// Attribute measures the source (selected as store.MatchSource selects:
// "judge" takes every judge:… source) against the decisive-error labels of
// every other source on the given traces. It returns nil when none of the
// traces has such a label. The labelled agent is the one the trace's meta
// names (ingest.MetaMistakeAgent: Who&When names it apart from the step),
// else the agent of the labelled step; agents are compared ignoring case,
// as Who&When writes "Websurfer" for the agent that calls itself WebSurfer.
func Attribute(ctx context.Context, st StepReader, source string, ids []string, opt AgreementOptions) (*Attribution, error) {
	selected := []string{source}
	a := &Attribution{Source: source, Labels: []string{}, Rows: []AttributionRow{}, Within: opt.Within,
		Bootstrap: Bootstrap{Replicates: opt.Replicates, Seed: opt.Seed, Level: stats.Level}}
	// Few traces have a decisive-error label (none outside Who&When):
	// those are found in one read, rather than a header read per trace.
	labelled := map[string]bool{}
	err := st.EachFinding(ctx, ids, store.FindingQuery{RawLabel: ingest.DecisiveError}, func(f store.TraceFinding) error {
		if decisiveError([]trace.Finding{f.Finding}, selected) != nil {
			labelled[f.Trace] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading decisive-error labels: %w", err)
	}
	for _, id := range ids {
		if !labelled[id] {
			continue
		}
		// The header holds the findings and the meta; of the steps, only
		// the two compared are read.
		t, _, err := st.LoadHeader(ctx, id)
		if err != nil {
			return nil, err
		}
		label := decisiveError(t.Findings, selected)
		if label == nil {
			continue
		}
		if !slices.Contains(a.Labels, label.Source) {
			a.Labels = append(a.Labels, label.Source)
		}
		row := AttributionRow{Trace: id, LabelStep: slices.Min(label.Steps), LabelAgent: t.Meta[ingest.MetaMistakeAgent]}
		f, step := earliestFinding(t.Findings, selected)
		steps, err := st.StepsAt(ctx, id, []int{row.LabelStep, step})
		if err != nil {
			return nil, err
		}
		agentAt := func(i int) string {
			for _, s := range steps {
				if s.Index == i {
					return s.Agent
				}
			}
			return ""
		}
		if row.LabelAgent == "" {
			row.LabelAgent = agentAt(row.LabelStep)
		}
		if f != nil {
			a.Attributed++
			row.Mode, row.Step = f.Mode, &step
			row.Agent = agentAt(step)
			d := step - row.LabelStep
			row.AgentHit = row.Agent != "" && strings.EqualFold(row.Agent, row.LabelAgent)
			row.StepHit = d == 0
			row.NearHit = d >= -opt.Within && d <= opt.Within
		}
		a.Rows = append(a.Rows, row)
	}
	if len(a.Rows) == 0 {
		return nil, nil
	}
	slices.Sort(a.Labels)
	a.Traces = len(a.Rows)
	a.fill(opt)
	return a, nil
}

// decisiveError returns a trace's first decisive-error label that cites a
// step, from a source other than the selected ones.
func decisiveError(findings []trace.Finding, selected []string) *trace.Finding {
	for i := range findings {
		f := &findings[i]
		if f.RawLabel == ingest.DecisiveError && f.Verdict == trace.Present && len(f.Steps) > 0 && !store.MatchSource(f.Source, selected) {
			return f
		}
	}
	return nil
}

// earliestFinding returns the selected sources' finding of a MAST mode that
// cites the earliest step, and that step; nil when they located none.
func earliestFinding(findings []trace.Finding, selected []string) (*trace.Finding, int) {
	var best *trace.Finding
	bestStep := 0
	for i := range findings {
		f := &findings[i]
		if f.Verdict != trace.Present || len(f.Steps) == 0 || !store.MatchSource(f.Source, selected) {
			continue
		}
		if _, ok := taxonomy.MAST.Mode(f.Mode); !ok {
			continue
		}
		if step := slices.Min(f.Steps); best == nil || step < bestStep {
			best, bestStep = f, step
		}
	}
	return best, bestStep
}

// fill computes the three shares and, when intervals are asked for, their
// Wilson intervals: each is a proportion of traces, which a bootstrap
// would shrink to a point when the source gets every trace right or none.
func (a *Attribution) fill(opt AgreementOptions) {
	var correct [3]int
	for _, r := range a.Rows {
		for k, hit := range [3]bool{r.AgentHit, r.StepHit, r.NearHit} {
			if hit {
				correct[k]++
			}
		}
	}
	for k, m := range [3]*Share{&a.Agent, &a.Step, &a.Near} {
		m.Correct = correct[k]
		m.Value = stats.Round4(float64(correct[k]) / float64(len(a.Rows)))
		if opt.Replicates > 0 {
			m.setWilson(correct[k], len(a.Rows))
		}
	}
}
