package store

import (
	"context"
	"slices"

	"github.com/faultline/faultline/trace"
)

// StepPick says which steps of each trace a reader of recurring failures
// takes: a few steps a trace, never all of them, so that a pass over a
// hundred thousand traces reads what it needs and no more.
type StepPick struct {
	// Failed takes the tool results that failed: marked as errors, or
	// with a non-zero exit code.
	Failed bool
	// LastCalls takes the trace's last N tool calls.
	LastCalls int
	// Last takes the trace's last step, which says how the run ended.
	Last bool
	// At names further steps of a trace by index (the steps a finding
	// cites); nil names none.
	At func(id string) []int
	// TextLimit is how many characters of a step's text and of its
	// arguments are read; 0 reads them whole.
	TextLimit int
}

// PickedSteps are the steps a StepPick took from one trace, in index order.
// Only Index, Kind, Tool, ExitCode, IsError, Text and Args are read.
type PickedSteps struct {
	ID    string
	Steps []trace.Step
}

// FailedResult says whether a step is a tool result that failed.
func FailedResult(s *trace.Step) bool {
	return s.Kind == trace.KindToolResult && (s.IsError || (s.ExitCode != nil && *s.ExitCode != 0))
}

// Choose returns the positions in heads, a trace's steps in index order
// (their text not needed), of the steps p takes, in order.
func (p StepPick) Choose(id string, heads []trace.Step) []int {
	var out []int
	if p.Failed {
		for i := range heads {
			if FailedResult(&heads[i]) {
				out = append(out, i)
			}
		}
	}
	for i, n := len(heads)-1, 0; i >= 0 && n < p.LastCalls; i-- {
		if heads[i].Kind == trace.KindToolCall {
			out = append(out, i)
			n++
		}
	}
	if p.Last && len(heads) > 0 {
		out = append(out, len(heads)-1)
	}
	if p.At != nil {
		for _, idx := range p.At(id) {
			if i, ok := slices.BinarySearchFunc(heads, idx, func(s trace.Step, idx int) int { return s.Index - idx }); ok {
				out = append(out, i)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// StepRef names one step of one trace.
type StepRef struct {
	Trace string
	Index int
}

// PickBatchSize is how many traces a backend reads steps of per query.
const PickBatchSize = 500

// PickSteps is how the SQL backends answer a StepPick, a batch of traces
// at a time, in two reads: heads reads the steps of a batch of traces
// without their text or arguments (Index, Kind, ExitCode and IsError), in
// trace then index order, and texts reads the chosen steps whole (their
// text and arguments cut to limit characters), in the same order. fn is
// called once per trace of ids that has steps, in the order of ids.
func PickSteps(ctx context.Context, ids []string, p StepPick,
	heads func(ctx context.Context, ids []string, fn func(id string, s trace.Step)) error,
	texts func(ctx context.Context, want []StepRef, limit int, fn func(id string, s trace.Step)) error,
	fn func(PickedSteps) error) error {
	for start := 0; start < len(ids); start += PickBatchSize {
		batch := ids[start:min(len(ids), start+PickBatchSize)]
		byTrace := map[string][]trace.Step{}
		err := heads(ctx, batch, func(id string, s trace.Step) { byTrace[id] = append(byTrace[id], s) })
		if err != nil {
			return err
		}
		var want []StepRef
		asked := map[string]bool{}
		for _, id := range batch {
			if asked[id] {
				continue // an id given twice is read once
			}
			asked[id] = true
			steps := byTrace[id]
			for _, i := range p.Choose(id, steps) {
				want = append(want, StepRef{Trace: id, Index: steps[i].Index})
			}
		}
		picked := map[string][]trace.Step{}
		if len(want) > 0 {
			err = texts(ctx, want, p.TextLimit, func(id string, s trace.Step) { picked[id] = append(picked[id], s) })
			if err != nil {
				return err
			}
		}
		for _, id := range batch {
			if _, ok := byTrace[id]; !ok {
				continue
			}
			delete(byTrace, id) // an id given twice in a batch is answered once
			if err := fn(PickedSteps{ID: id, Steps: picked[id]}); err != nil {
				return err
			}
		}
	}
	return nil
}
