package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/internal/labels"
	"github.com/faultline/faultline/internal/store"
	"github.com/faultline/faultline/trace"
)

// LabelStore is what storing labels needs from a store.
type LabelStore interface {
	Load(ctx context.Context, id string) (*trace.Trace, error)
	// ReplaceFindings replaces a source's findings on a trace.
	ReplaceFindings(ctx context.Context, traceID, source string, findings []trace.Finding, detectedWith string) error
}

// LabelFinding turns a label of trace t into the finding that stores it as
// source, checking its evidence against the trace: the steps it cites must
// exist and its quote appear in them. Every way labels are stored (a label
// file, the labelling page) goes through it.
func LabelFinding(t *trace.Trace, l labels.ModeLabel, source string) (trace.Finding, error) {
	f := labels.Finding(l, source)
	return f, f.CheckEvidence(t)
}

// ImportLabels stores a set of labels as the findings of source, replacing
// that source's findings on every trace the set labels. A label whose
// evidence is not in its trace (a step it does not have, a quote not in the
// cited steps) is reported and left out, as are the labels of traces not
// in the store; the others are stored. It returns how many labels were
// stored.
func ImportLabels(ctx context.Context, s LabelStore, set *labels.Set, source string) (int, []ingest.Issue, error) {
	var issues []ingest.Issue
	report := func(l labels.ModeLabel, format string, args ...any) {
		issues = append(issues, ingest.Issue{Path: set.Name, Line: l.Line, Severity: ingest.Error, Message: fmt.Sprintf(format, args...)})
	}
	stored := 0
	for start := 0; start < len(set.Labels); {
		// The set is ordered by trace: one trace's labels at a time.
		end := start
		for end < len(set.Labels) && set.Labels[end].Trace == set.Labels[start].Trace {
			end++
		}
		group := set.Labels[start:end]
		start = end
		t, err := s.Load(ctx, group[0].Trace)
		if errors.Is(err, store.ErrNotFound) {
			report(group[0], "trace %q is not in the database; its labels are skipped", group[0].Trace)
			continue
		}
		if err != nil {
			return stored, issues, err
		}
		var findings []trace.Finding
		for _, l := range group {
			f, err := LabelFinding(t, l, source)
			if err != nil {
				report(l, "%v; label skipped", err)
				continue
			}
			findings = append(findings, f)
		}
		if err := s.ReplaceFindings(ctx, t.ID, source, findings, ""); err != nil {
			return stored, issues, err
		}
		stored += len(findings)
	}
	return stored, issues, nil
}
