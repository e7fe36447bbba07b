// Package detect finds MAST failure modes in a trace with deterministic
// rules. A Detector is a value, in the manner of go/analysis: it declares the
// mode it looks for and documents itself, and a driver runs many of them over
// a trace. Detectors are precision-first: they report only what the trace
// itself shows, with the steps it happened at and a verbatim quote; what
// cannot be decided from the trace alone is left to the judge.
//
// Besides MAST modes, some detectors report failures of the infrastructure
// around the agent (taxonomy.System codes SYS-1 …), so that a model endpoint
// that never answers is not counted as an agent failure. A run in which the
// agent never produced a step is left to those: the detectors of agent
// behaviour stay silent on it.
//
// Facts that several detectors need (what the task requires, what became of
// its output file, what each call ran) are computed once per trace and
// shared; see facts.go, task.go and answer.go.
package detect

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// Source is the annotation source of every detector finding.
const Source = trace.DetectorSource

// Detector is one deterministic rule for one failure mode.
type Detector struct {
	Name string // stable identifier, e.g. "repeated-tool-call"
	Mode string // the code it reports: a MAST mode ("FM-1.3") or a system failure ("SYS-1")
	// Doc says, in its first sentence, what the detector finds; then what it
	// looks for and its known blind spots.
	Doc string
	Run func(*Pass)
	// Finished marks a detector that judges a run as it ended (its answer,
	// its last checks, its closing message): on a run still going, what it
	// reports is not yet a failure. Run-time guards apply it only when the
	// run tries to finish.
	Finished bool
	// Version identifies the content of a detector written as data (a
	// user's rule, package rules): a hash of its definition, so that a
	// changed rule makes its stored findings stale. "" for the built-in
	// detectors, which Revision versions instead.
	Version string
	// Severity is how much a rule's author says its findings matter: low,
	// medium or high. "" for the built-in detectors.
	Severity string
	// Taxonomy is the taxonomy its findings record. "" looks the mode's up
	// (MAST or the system codes); a rule reporting a code of the user's own,
	// which neither knows, sets CustomTaxonomy.
	Taxonomy string
}

// CustomTaxonomy is the taxonomy of codes a user declares in a rule file.
const CustomTaxonomy = "custom"

// Summary is the first sentence of Doc.
func (d *Detector) Summary() string {
	first, _, _ := strings.Cut(d.Doc, "\n")
	return first
}

// Pass is one detector's run over one trace.
type Pass struct {
	Trace    *trace.Trace
	detector *Detector
	facts    *facts // shared by every detector run over this trace
	findings []trace.Finding
}

// Report records a finding. The detector fills in Steps, Quote, Confidence
// and Explanation; Report fills in the rest.
func (p *Pass) Report(f trace.Finding) {
	f.Mode = p.detector.Mode
	f.Source = Source
	f.Detector = p.detector.Name
	f.Verdict = trace.Present
	if p.detector.Taxonomy != "" {
		f.Taxonomy = p.detector.Taxonomy
	} else {
		_, f.Taxonomy, _ = taxonomy.Lookup(f.Mode)
	}
	f.Confidence = math.Round(f.Confidence*100) / 100
	p.findings = append(p.findings, f)
}

// Revision is bumped whenever a detector's logic changes, so stored findings
// made by an older set are recomputed.
const Revision = 4

// All is every detector, in the order they run: infrastructure first, then
// MAST modes in taxonomy order.
var All = []*Detector{
	EmptyModelResponse, InfrastructureError, RateLimited, ContextOverflow,
	ForbiddenFileRead, ForbiddenCommand, AnswerFormat, ProseFinal, RoleBreach,
	RepeatedToolCall, RepeatedPlanUpdate, RepeatedMessage,
	RepeatedKnownError, ForgottenResult,
	HarnessRetryLoop, WorkAfterAnswer, StepLimit, StalledLoop,
	ToolingDetour, OutsideDataDir,
	AnnouncedActionMismatch, UnbackedPlanStep,
	MissingAnswer, EarlyAnswer, AbortedTurn,
	SkippedValidation,
	IgnoredValidationFailure, UnbackedClaim, UnsupportedEvidence, ClaimedExecution,
}

// Version identifies a detector set: the revision and the detectors' names,
// each written name@version when the detector has a Version of its own.
func Version(ds []*Detector) string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.Name
		if d.Version != "" {
			names[i] += "@" + d.Version
		}
	}
	return fmt.Sprintf("r%d:%s", Revision, strings.Join(names, ","))
}

// Run runs the detectors over t and returns their findings, ordered by first
// cited step. A finding whose evidence does not check out (a step that does
// not exist, a quote that is not there) is a bug in its detector: it is
// dropped and returned as an error rather than shown to anyone.
func Run(t *trace.Trace, ds []*Detector) ([]trace.Finding, []error) {
	var out []trace.Finding
	var errs []error
	shared := newFacts(t)
	for _, d := range ds {
		p := &Pass{Trace: t, detector: d, facts: shared}
		d.Run(p)
		for _, f := range p.findings {
			if err := f.CheckEvidence(t); err != nil {
				errs = append(errs, fmt.Errorf("detector %s on trace %s: %w", d.Name, t.ID, err))
				continue
			}
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].FirstStep() < out[j].FirstStep() })
	return out, errs
}

// Lookup returns the detector with the given name.
func Lookup(name string) (*Detector, bool) {
	for _, d := range All {
		if d.Name == name {
			return d, true
		}
	}
	return nil, false
}

// quoteFrom returns a verbatim excerpt of s of at most n bytes, cut at a rune
// boundary, with surrounding whitespace trimmed. Quotes must occur in the
// trace as they are, so no ellipsis is added.
func quoteFrom(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return strings.TrimSpace(s[:cut])
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// lineAround returns a verbatim excerpt of at most n bytes of the line of
// text holding offset at: from the line's start when the offset is near it,
// else from the offset.
func lineAround(text string, at, n int) string {
	start := strings.LastIndexByte(text[:at], '\n') + 1
	if at-start > n/2 {
		start = at
	}
	line := text[start:]
	if end := strings.IndexByte(line, '\n'); end >= 0 {
		line = line[:end]
	}
	return quoteFrom(line, n)
}

// times says how often something happened: "once", "twice", "3 times".
func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}
