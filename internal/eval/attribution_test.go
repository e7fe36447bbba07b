package eval

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/store/sqlite"

	"github.com/faultline/faultline/ingest"
	"github.com/faultline/faultline/trace"
)

func TestAttribute(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Each trace's steps are spoken by these agents, in order.
	mk := func(id, mistakeAgent string, findings ...trace.Finding) *trace.Trace {
		tr := &trace.Trace{ID: id, Format: "whowhen", Findings: findings}
		for _, agent := range []string{"", "A", "B", "A", "C"} {
			tr.Append(trace.Step{Kind: trace.KindMessage, Agent: agent, Text: "x"})
		}
		tr.SetMeta(ingest.MetaMistakeAgent, mistakeAgent)
		return tr
	}
	label := func(source string, steps ...int) trace.Finding {
		return trace.Finding{Source: source, Verdict: trace.Present, RawLabel: ingest.DecisiveError, Steps: steps}
	}
	f := func(source, mode string, v trace.Verdict, steps ...int) trace.Finding {
		return trace.Finding{Source: source, Mode: mode, Verdict: v, Steps: steps}
	}
	human := ingest.WhoWhenSource
	traces := []*trace.Trace{
		// The earliest finding is the FM-2.3 one, at the labelled step.
		mk("a", "B", label(human, 2), f("judge:m", "FM-1.3", trace.Present, 4), f("judge:m", "FM-2.3", trace.Present, 3, 2)),
		// Right agent (in another case), two steps early; what is not a
		// located MAST finding of the source does not count.
		mk("b", "a", label(human, 3), f("judge:m", "FM-1.1", trace.Present, 1), f("judge:m", "", trace.Present, 0),
			f("judge:m", "SYS-1", trace.Present, 0), f("judge:m", "FM-1.2", trace.Absent, 0), f("human:x", "FM-1.2", trace.Present, 0)),
		// No agent in the meta: the labelled step's; the source located nothing.
		mk("c", "", label(human, 1), f("judge:m", "FM-3.3", trace.Present)),
		// Not counted: no label, the source's own label, a label of no step.
		mk("d", "", f("judge:m", "FM-1.3", trace.Present, 1)),
		mk("e", "A", label("judge:m", 1), f("judge:m", "FM-1.3", trace.Present, 1)),
		mk("f", "A", label(human), f("judge:m", "FM-1.3", trace.Present, 1)),
	}
	if _, err := ingest.StoreFile(ctx, st, ingest.FileInfo{Path: "/w", Hash: "w"}, traces...); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tr := range traces {
		ids = append(ids, tr.ID)
	}

	a, err := Attribute(ctx, st, "judge", ids, AgreementOptions{Within: 1, Replicates: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range a.Rows {
		step := "-"
		if r.Step != nil {
			step = fmt.Sprint(*r.Step)
		}
		rows = append(rows, fmt.Sprintf("%s %s@%d %s %s@%s %v %v %v", r.Trace, r.LabelAgent, r.LabelStep, r.Mode, r.Agent, step, r.AgentHit, r.StepHit, r.NearHit))
	}
	want := `a B@2 FM-2.3 B@2 true true true
b a@3 FM-1.1 A@1 true false false
c A@1  @- false false false`
	if got := strings.Join(rows, "\n"); got != want {
		t.Errorf("rows:\n%s\nwant\n%s", got, want)
	}
	if a.Traces != 3 || a.Attributed != 2 || fmt.Sprint(a.Labels) != "[human:whowhen]" || a.Source != "judge" {
		t.Errorf("traces %d attributed %d labels %v", a.Traces, a.Attributed, a.Labels)
	}
	for _, s := range []struct {
		name    string
		share   Share
		correct int
		value   float64
		lo, hi  float64 // Wilson's interval of correct in 3
	}{{"agent", a.Agent, 2, 0.6667, 0.2077, 0.9385}, {"step", a.Step, 1, 0.3333, 0.0615, 0.7923}, {"near", a.Near, 1, 0.3333, 0.0615, 0.7923}} {
		if s.share.Correct != s.correct || value(s.share.Metric) != s.value || s.share.Interval != IntervalWilson || s.share.Lo == nil || *s.share.Lo != s.lo || *s.share.Hi != s.hi {
			t.Errorf("%s: %d correct, %v [%v, %v]; want %d, %v [%v, %v]", s.name, s.share.Correct, value(s.share.Metric), s.share.Lo, s.share.Hi, s.correct, s.value, s.lo, s.hi)
		}
	}

	// Two steps of tolerance reach b's finding.
	wide, err := Attribute(ctx, st, "judge:m", ids, AgreementOptions{Within: 2})
	if err != nil {
		t.Fatal(err)
	}
	if wide.Near.Correct != 2 || wide.Near.Lo != nil {
		t.Errorf("within 2: near %+v", wide.Near)
	}
	// No decisive-error label on these traces: nothing to measure.
	none, err := Attribute(ctx, st, "judge", []string{"d"}, AgreementOptions{})
	if err != nil || none != nil {
		t.Errorf("no labels: %+v, %v", none, err)
	}
	// Of the traces, only those with a label that counts are read one by
	// one: on a large store, almost none.
	headers := &headerCounter{StepReader: st}
	if _, err := Attribute(ctx, headers, "judge:m", ids, AgreementOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c"}; !slices.Equal(headers.read, want) {
		t.Errorf("headers read of %v, want %v", headers.read, want)
	}
}

// headerCounter notes which traces' headers are read.
type headerCounter struct {
	StepReader
	read []string
}

func (h *headerCounter) LoadHeader(ctx context.Context, id string) (*trace.Trace, int, error) {
	h.read = append(h.read, id)
	return h.StepReader.LoadHeader(ctx, id)
}
