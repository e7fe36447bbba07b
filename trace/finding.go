package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Verdict is what an annotation says about one mode on one trace.
type Verdict string

const (
	Present Verdict = "present"
	Absent  Verdict = "absent"
	Unsure  Verdict = "unsure"
)

// Finding is one annotation of a failure mode on a trace by one source: a
// detector, a judge, a human labeller or a dataset's bundled labels.
// A detector only ever reports Present; its silence is not a verdict.
type Finding struct {
	Mode    string  `json:"mode"`    // taxonomy code, e.g. FM-1.3; empty when RawLabel could not be mapped
	Source  string  `json:"source"`  // "detector", "judge:<model>", "human:<name>", "mad:annotator_1"
	Verdict Verdict `json:"verdict"` // present, absent or unsure
	// Detector names the detector that produced a detector finding.
	Detector    string  `json:"detector,omitempty"`
	Steps       []int   `json:"steps,omitempty"` // indices into Trace.Steps
	Quote       string  `json:"quote,omitempty"` // evidence, verbatim from the cited steps
	Confidence  float64 `json:"confidence,omitempty"`
	Explanation string  `json:"explanation,omitempty"`
	Taxonomy    string  `json:"taxonomy,omitempty"` // taxonomy version the code belongs to
	// RawLabel is the label as the source wrote it, kept when it was remapped
	// or could not be mapped.
	RawLabel string `json:"raw_label,omitempty"`
}

// CheckEvidence verifies that a finding cites steps that exist in t and that
// its quote occurs, whitespace-normalised, in at least one cited step (its
// text, its arguments or its tool name).
func (f *Finding) CheckEvidence(t *Trace) error {
	for _, i := range f.Steps {
		if t.Step(i) == nil {
			return fmt.Errorf("finding %s cites step %d, trace has %d steps", f.Mode, i, len(t.Steps))
		}
	}
	if f.Quote == "" {
		return nil
	}
	if len(f.Steps) == 0 {
		return fmt.Errorf("finding %s quotes evidence but cites no step", f.Mode)
	}
	want := NormalizeSpace(f.Quote)
	for _, i := range f.Steps {
		s := t.Step(i)
		if strings.Contains(NormalizeSpace(s.Text), want) || strings.Contains(NormalizeSpace(s.Args), want) || strings.Contains(s.Tool, want) {
			return nil
		}
	}
	return fmt.Errorf("finding %s: quote %q does not occur in steps %v", f.Mode, Clip(f.Quote, 60), f.Steps)
}

// NormalizeSpace collapses every run of whitespace to one space and trims the
// ends, so quotes survive re-wrapping.
func NormalizeSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Clip shortens s to at most n runes, marking the cut with an ellipsis.
func Clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	count := 0
	for i := range s {
		if count == n {
			return s[:i] + "…"
		}
		count++
	}
	return s
}

// Outcome is a judgement of how a run went, from one source.
type Outcome struct {
	Source  string   `json:"source"`            // "itbench", "labels", "format"
	Metric  string   `json:"metric,omitempty"`  // e.g. root_cause_recall
	Score   *float64 `json:"score,omitempty"`   // the metric's value
	Success *bool    `json:"success,omitempty"` // nil when undecided
	Detail  string   `json:"detail,omitempty"`
}

// MarshalJSON writes a Detail that holds a JSON object or array as that
// JSON, so that readers get its fields rather than a string to decode
// again; any other Detail stays a string.
func (o Outcome) MarshalJSON() ([]byte, error) {
	type fields Outcome
	d := strings.TrimSpace(o.Detail)
	if (strings.HasPrefix(d, "{") || strings.HasPrefix(d, "[")) && json.Valid([]byte(d)) {
		return json.Marshal(struct {
			fields
			Detail json.RawMessage `json:"detail"`
		}{fields(o), json.RawMessage(d)})
	}
	return json.Marshal(fields(o))
}

// UnmarshalJSON reads what MarshalJSON writes: a detail that is a string,
// or JSON kept as its text.
func (o *Outcome) UnmarshalJSON(b []byte) error {
	type fields Outcome
	var v struct {
		fields
		Detail json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*o = Outcome(v.fields)
	o.Detail = ""
	switch d := bytes.TrimSpace(v.Detail); {
	case len(d) == 0 || string(d) == "null":
	case d[0] == '"':
		if err := json.Unmarshal(d, &o.Detail); err != nil {
			return err
		}
	default:
		o.Detail = string(d)
	}
	return nil
}

// DetectorSource is the source of every finding of the deterministic
// detectors (package detect): findings computed from a trace's content,
// which a new version of the trace replaces.
const DetectorSource = "detector"

// FormatOutcomeSource is the source of an outcome the trace's own format
// recorded (a benchmark's reward or score, a failed root span).
const FormatOutcomeSource = "format"

// outcomePreference orders outcome sources from most to least authoritative
// when a trace has several: explicit labels, then our scoring, then an
// official judge's, then what the format itself recorded.
var outcomePreference = []string{"labels", "itbench", "itbench-official", FormatOutcomeSource}

// OutcomePreference lists the outcome sources in the order PrimaryOutcome
// prefers them; a source not listed comes after them all, by name. Queries
// that pick the primary outcome in SQL build their ordering from it.
func OutcomePreference() []string { return slices.Clone(outcomePreference) }

// PrimaryOutcome returns the outcome that speaks for a trace: the decided
// outcome (Success set) of the most authoritative source, or nil.
func PrimaryOutcome(outcomes []Outcome) *Outcome {
	rank := func(src string) int {
		for i, s := range outcomePreference {
			if s == src {
				return i
			}
		}
		return len(outcomePreference)
	}
	var best *Outcome
	for i := range outcomes {
		o := &outcomes[i]
		if o.Success == nil {
			continue
		}
		if best == nil || rank(o.Source) < rank(best.Source) || (rank(o.Source) == rank(best.Source) && o.Source < best.Source) {
			best = o
		}
	}
	return best
}

// SortedSteps is a copy of steps in ascending order, for display: a
// source may cite steps in another order (the step that matters first).
func SortedSteps(steps []int) []int {
	out := slices.Clone(steps)
	slices.Sort(out)
	return out
}

// FirstStep is the first step the finding cites, as cited (findings are
// ordered by it), or -1 when it cites none.
func (f Finding) FirstStep() int {
	if len(f.Steps) == 0 {
		return -1
	}
	return f.Steps[0]
}
