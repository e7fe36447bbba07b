package memory

import (
	"context"

	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// PickSteps calls fn with the steps p takes from each of the traces ids
// names that exist, in the order of ids, as the SQL backends do.
func (s *Store) PickSteps(ctx context.Context, ids []string, p store.StepPick, fn func(store.PickedSteps) error) error {
	seen := map[string]bool{}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.mu.RLock()
		t, ok := s.traces[id]
		s.mu.RUnlock()
		if !ok || seen[id] || len(t.Steps) == 0 {
			continue
		}
		seen[id] = true
		var picked []trace.Step
		for _, i := range p.Choose(id, t.Steps) {
			st := t.Steps[i]
			picked = append(picked, trace.Step{Index: st.Index, Kind: st.Kind, Tool: st.Tool, ExitCode: st.ExitCode, IsError: st.IsError,
				Text: head(st.Text, p.TextLimit), Args: head(st.Args, p.TextLimit)})
		}
		if err := fn(store.PickedSteps{ID: id, Steps: picked}); err != nil {
			return err
		}
	}
	return nil
}

// head keeps the first limit characters of s, as the SQL backends' substr
// and left do; 0 keeps it whole.
func head(s string, limit int) string {
	if limit <= 0 {
		return s
	}
	return text.Head(s, limit)
}
