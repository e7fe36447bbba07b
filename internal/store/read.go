package store

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/faultline/faultline/trace"
)

// TraceParts are the reads a whole trace is made of.
type TraceParts interface {
	// LoadHeader reads a trace without its steps and says how many it has.
	LoadHeader(ctx context.Context, id string) (*trace.Trace, int, error)
	// StepRange reads the steps of a trace with indices from..to-1.
	StepRange(ctx context.Context, id string, from, to int) ([]trace.Step, error)
}

// LoadWhole reads a whole trace from its parts: the header, with every
// finding and outcome, and every step.
func LoadWhole(ctx context.Context, r TraceParts, id string) (*trace.Trace, error) {
	t, _, err := r.LoadHeader(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.Steps, err = r.StepRange(ctx, id, 0, math.MaxInt); err != nil {
		return nil, err
	}
	return t, nil
}

// ResolveAmong picks the trace that idOrPrefix names among ids, the stored
// ids it prefixes (the first few, sorted): itself when it is one, else the
// only one; none is ErrNotFound, and several are ambiguous.
func ResolveAmong(idOrPrefix string, ids []string) (string, error) {
	switch {
	case slices.Contains(ids, idOrPrefix):
		return idOrPrefix, nil
	case len(ids) == 0:
		return "", fmt.Errorf("trace %q: %w", idOrPrefix, ErrNotFound)
	case len(ids) == 1:
		return ids[0], nil
	default:
		return "", fmt.Errorf("trace %q is ambiguous: matches %s…", idOrPrefix, strings.Join(ids, ", "))
	}
}
