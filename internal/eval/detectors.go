package eval

import (
	"context"
	"fmt"
	"slices"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/stats"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// DetectorRow holds one detector against reference labels of the mode it
// claims: on each labelled trace where the labels decide that mode, did it
// fire? Several detectors may claim one mode; the per-mode table pools them,
// this one tells which of them is right.
type DetectorRow struct {
	Detector string `json:"detector"`
	Mode     string `json:"mode"`
	Name     string `json:"name"`
	Pairs    int    `json:"pairs"` // labelled traces where the labels decide the mode
	TP       int    `json:"tp"`
	FP       int    `json:"fp"`
	FN       int    `json:"fn"`
	TN       int    `json:"tn"`
	// Precision and Recall are nil when undefined (it never fired, or the
	// labels never say present).
	Precision *float64 `json:"precision"`
	Recall    *float64 `json:"recall"`
	// Exact counts true positives whose finding cites a step the label
	// cites, among those whose label cites steps (Located).
	Located int `json:"located"`
	Exact   int `json:"exact"`
}

// FindingReader is what holding detectors against labels reads from a
// store.
type FindingReader interface {
	// EachFinding calls fn with each finding q selects on the given
	// traces: the detectors' findings on every labelled trace in one read,
	// not one per trace.
	EachFinding(ctx context.Context, ids []string, q store.FindingQuery, fn func(store.TraceFinding) error) error
}

// AgreeDetectors holds each current detector against the reference labels
// ref, on the labelled traces, from the detector findings stored for them
// (which must be the current detector set's: eval re-runs the detectors
// first). Detectors whose mode the labels never decide are left out. ref
// comes indexed (see Index), as the agreement beside these rows reads it.
func AgreeDetectors(ctx context.Context, st FindingReader, ref *Labels) ([]DetectorRow, error) {
	ids := slices.Sorted(slices.Values(ref.ids))
	fired := map[string]map[string][]int{} // trace → detector → steps
	err := st.EachFinding(ctx, ids, store.FindingQuery{Sources: []string{detect.Source}}, func(f store.TraceFinding) error {
		// The query also selects detector:… sources, should any be stored.
		if f.Source != detect.Source || f.Verdict != trace.Present {
			return nil
		}
		if fired[f.Trace] == nil {
			fired[f.Trace] = map[string][]int{}
		}
		fired[f.Trace][f.Detector] = append(fired[f.Trace][f.Detector], f.Steps...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading detector findings: %w", err)
	}
	var rows []DetectorRow
	for _, d := range detect.All {
		row := DetectorRow{Detector: d.Name, Mode: d.Mode, Name: taxonomy.Name(d.Mode)}
		var c stats.Confusion
		for _, id := range ids {
			l := ref.get(id, d.Mode)
			steps, on := fired[id][d.Name]
			switch cellOf(verdictOf(on), l.Verdict) {
			case tp:
				c.TP++
				if len(l.Steps) > 0 {
					row.Located++
					if nearest(steps, l.Steps) == 0 {
						row.Exact++
					}
				}
			case fp:
				c.FP++
			case fn:
				c.FN++
			case tn:
				c.TN++
			}
		}
		if c.N() == 0 {
			continue
		}
		row.Pairs, row.TP, row.FP, row.FN, row.TN = c.N(), c.TP, c.FP, c.FN, c.TN
		if v, ok := c.Precision(); ok {
			row.Precision = stats.Round4(v)
		}
		if v, ok := c.Recall(); ok {
			row.Recall = stats.Round4(v)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func verdictOf(present bool) trace.Verdict {
	if present {
		return trace.Present
	}
	return trace.Absent
}
