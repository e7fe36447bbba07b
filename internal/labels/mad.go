package labels

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

// readMAD reads a MAD dataset through the trace decoder and turns the
// labels its records carry into a Set: the human annotators' majority
// (pick Consensus or "") or one source's labels.
func readMAD(ctx context.Context, path, pick string) (*Set, []ingest.Issue, error) {
	sink := &madSink{}
	var issues []ingest.Issue
	report := func(i ingest.Issue) {
		// Notices are about the traces (labels of dropped draft modes);
		// ingesting the file reports them. Errors cost labels.
		if i.Severity == ingest.Error {
			issues = append(issues, i)
		}
	}
	if _, err := ingest.Paths(ctx, []string{path}, sink, ingest.Options{Report: report}); err != nil {
		return nil, issues, err
	}
	sources := map[string]bool{}
	var annotators []string
	for _, t := range sink.traces {
		for _, f := range t.findings {
			if !sources[f.Source] && strings.HasPrefix(f.Source, "mad:annotator") {
				annotators = append(annotators, f.Source)
			}
			sources[f.Source] = true
		}
	}
	sort.Strings(annotators)
	all := make([]string, 0, len(sources))
	for s := range sources {
		all = append(all, s)
	}
	sort.Strings(all)
	set := &Set{Name: path}
	switch {
	case pick == "" || pick == Consensus:
		if len(annotators) == 0 {
			return nil, issues, fmt.Errorf("%s has no human annotators' labels to take the consensus of (its label sources: %s); pick one with --labels-source", path, orNone(all))
		}
		need := len(annotators)/2 + 1
		set.Sources = annotators
		set.Detail = fmt.Sprintf("consensus: present or absent when at least %d of the %d annotators agree, otherwise unsure", need, len(annotators))
		set.Labels = consensus(sink.traces, need)
	case sources[pick]:
		set.Sources = []string{pick}
		set.Detail = "labels of " + pick
		for _, t := range sink.traces {
			for _, f := range t.findings {
				if f.Source == pick {
					set.Labels = append(set.Labels, ModeLabel{Trace: t.id, Mode: f.Mode, Verdict: f.Verdict, Steps: f.Steps})
				}
			}
		}
	default:
		return nil, issues, fmt.Errorf("%s has no labels of %q; its label sources are %s, or %s for the annotators' majority", path, pick, orNone(all), Consensus)
	}
	sortLabels(set.Labels)
	return set, issues, nil
}

// consensus takes, for every trace and mode, the verdict at least need
// annotators gave; without such a majority the pair is unsure.
func consensus(traces []madTrace, need int) []ModeLabel {
	var out []ModeLabel
	for _, t := range traces {
		votes := map[string]map[trace.Verdict]int{}
		var order []string
		for _, f := range t.findings {
			if !strings.HasPrefix(f.Source, "mad:annotator") {
				continue
			}
			if votes[f.Mode] == nil {
				votes[f.Mode] = map[trace.Verdict]int{}
				order = append(order, f.Mode)
			}
			votes[f.Mode][f.Verdict]++
		}
		for _, mode := range order {
			v := trace.Unsure
			switch {
			case votes[mode][trace.Present] >= need:
				v = trace.Present
			case votes[mode][trace.Absent] >= need:
				v = trace.Absent
			}
			out = append(out, ModeLabel{Trace: t.id, Mode: mode, Verdict: v})
		}
	}
	return out
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// madTrace is what the labels need of a decoded MAD record: its trace id
// (the one ingesting the file gives it) and its mapped label findings.
type madTrace struct {
	id       string
	findings []trace.Finding
}

// madSink collects the labels of the traces the MAD decoder emits,
// dropping their steps as it goes.
type madSink struct{ traces []madTrace }

func (s *madSink) File(ctx context.Context, f ingest.FileInfo) (ingest.FileSink, error) {
	if f.Format != (ingest.MAD{}).Name() {
		return nil, fmt.Errorf("%s: read as %s, not as a MAD dataset", f.Path, f.Format)
	}
	return s, nil
}

func (s *madSink) Trace(ctx context.Context, t *trace.Trace) error {
	var fs []trace.Finding
	for _, f := range t.Findings {
		// Labels of draft modes with no successor have no code: nothing to compare.
		if f.Mode != "" {
			fs = append(fs, f)
		}
	}
	s.traces = append(s.traces, madTrace{id: t.ID, findings: fs})
	return nil
}

func (s *madSink) Close(context.Context, ingest.FileResult) error { return nil }
