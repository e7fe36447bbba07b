package report

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/store/memory"
	"github.com/faultline/faultline/trace"
)

// studyModel describes one model of the ITBench/MAST study as annotation
// and outcome tables whose aggregates are the study's published figures.
type studyModel struct {
	name string
	// Successes score 1 (one of Gemini's scores 0.5, which still counts as
	// success), failures 0: mean recall = (successes, or 75.5) / traces.
	traces, succeeded int
	halfScore         bool
	// Failed traces: the first many carry `many` modes, the rest one fewer.
	many, withMany int
	// Modes every failed trace starts with, in the order they appear, for
	// the first n failures (mode → n); then fillers from the pool.
	failedModes []countedMode
	pool        []string
	// Modes in the first n successful traces.
	succeededModes []countedMode
}

type countedMode struct {
	mode string
	n    int
}

// The study: Gemini-3-Flash 100 traces, recall 75.5%, density 2.6, FM-3.3
// +52% in failed runs (12 of 24 failures, 25 of 76 successes);
// Kimi-K2 105 traces, recall 28.6%, density 4.7, FM-2.6 in 92% of failures
// (69/75), FM-1.3 in over 90% of successes (28/30); GPT-OSS-120B 105
// traces, recall 12.4%, density 5.3.
var study = []studyModel{
	{name: "gemini-3-flash", traces: 100, succeeded: 76, halfScore: true, many: 3, withMany: 14, // 14·3 + 10·2 = 62 modes over 24 failures: 2.58
		failedModes:    []countedMode{{"FM-3.3", 12}},
		pool:           []string{"FM-3.2", "FM-1.1", "FM-3.1", "FM-1.5", "FM-2.3", "FM-2.2"},
		succeededModes: []countedMode{{"FM-3.3", 25}, {"FM-1.1", 19}}},
	{name: "kimi-k2", traces: 105, succeeded: 30, many: 5, withMany: 53, // 53·5 + 22·4 = 353 over 75: 4.71
		failedModes:    []countedMode{{"FM-2.6", 69}, {"FM-1.3", 68}},
		pool:           []string{"FM-2.3", "FM-3.1", "FM-1.5", "FM-3.3", "FM-1.4", "FM-2.2", "FM-3.2"},
		succeededModes: []countedMode{{"FM-1.3", 28}, {"FM-2.6", 3}}},
	{name: "gpt-oss-120b", traces: 105, succeeded: 13, many: 6, withMany: 28, // 28·6 + 64·5 = 488 over 92: 5.30
		failedModes:    []countedMode{{"FM-2.6", 92}},
		pool:           []string{"FM-1.4", "FM-3.3", "FM-1.5", "FM-3.1", "FM-2.3", "FM-3.2", "FM-1.3", "FM-2.2"},
		succeededModes: []countedMode{{"FM-1.3", 6}}},
}

func (m studyModel) traceList() []*trace.Trace {
	var out []*trace.Trace
	add := func(id string, success bool, score float64, modes []string) {
		tr := &trace.Trace{ID: id, Format: "codex", Model: m.name}
		tr.Append(trace.Step{Kind: trace.KindMessage, Text: "x"})
		for k, mode := range modes {
			// Modes appear in list order, four steps apart.
			tr.Findings = append(tr.Findings, trace.Finding{Mode: mode, Source: "human:study", Verdict: trace.Present, Steps: []int{3 + 4*k}})
		}
		tr.Outcomes = []trace.Outcome{{Source: "itbench", Metric: "root_cause_recall", Score: &score, Success: &success}}
		out = append(out, tr)
	}
	for i := range m.succeeded {
		var modes []string
		for _, cm := range m.succeededModes {
			if i < cm.n {
				modes = append(modes, cm.mode)
			}
		}
		score := 1.0
		if m.halfScore && i == 0 {
			score = 0.5
		}
		add(fmt.Sprintf("%s-s%03d", m.name, i), true, score, modes)
	}
	for i := range m.traces - m.succeeded {
		n := m.many - 1
		if i < m.withMany {
			n = m.many
		}
		var modes []string
		for _, cm := range m.failedModes {
			if i < cm.n {
				modes = append(modes, cm.mode)
			}
		}
		for j := 0; len(modes) < n; j++ {
			if mode := m.pool[(i+j)%len(m.pool)]; !contains(modes, mode) {
				modes = append(modes, mode)
			}
		}
		add(fmt.Sprintf("%s-f%03d", m.name, i), false, 0, modes)
	}
	return out
}

// storeOf holds traces in memory, as a store would after ingesting them.
func storeOf(t *testing.T, traces []*trace.Trace) *memory.Store {
	t.Helper()
	return memory.New(traces...)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestStudyFigures reproduces the study's figures from annotation and
// outcome tables built to match its aggregates, and checks that the report
// prints them.
func TestStudyFigures(t *testing.T) {
	var traces []*trace.Trace
	for _, m := range study {
		traces = append(traces, m.traceList()...)
	}
	r, err := analyze.BuildReport(context.Background(), storeOf(t, traces), analyze.ReportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	// section cuts the text from one section's title to the next's.
	titles := regexp.MustCompile(`(?m)^\d+\. (Overview|Mode prevalence|Failure density|Fatal and non-fatal modes|Co-occurrence|Cascades|Interventions|Harness)`)
	section := func(title string) string {
		start := strings.Index(text, title)
		if start < 0 {
			t.Fatalf("no section %q in\n%s", title, text)
		}
		rest := text[start+len(title):]
		if end := titles.FindStringIndex(rest); end != nil {
			rest = rest[:end[0]]
		}
		return rest
	}
	block := func(sec, heading string) string {
		start := strings.Index(sec, "\n"+heading)
		if start < 0 {
			t.Fatalf("no block %q in\n%s", heading, sec)
		}
		rest := sec[start+1:]
		if end := strings.Index(rest, "\n\n"); end >= 0 {
			rest = rest[:end]
		}
		return rest
	}
	expect := func(where, pattern string) {
		t.Helper()
		if !regexp.MustCompile(pattern).MatchString(where) {
			t.Errorf("%q not found in\n%s", pattern, where)
		}
	}

	overview := section("1. Overview")
	expect(overview, `(?m)^gemini-3-flash\s+100\s+76\s+24\s+0\s.*\s75\.5% \[`)
	expect(overview, `(?m)^kimi-k2\s+105\s+30\s+75\s+0\s.*\s28\.6% \[`)
	expect(overview, `(?m)^gpt-oss-120b\s+105\s+13\s+92\s+0\s.*\s12\.4% \[`)

	density := section("3. Failure density")
	expect(density, `(?m)^gemini-3-flash\s+24\s+2\.6 \[`)
	expect(density, `(?m)^kimi-k2\s+75\s+4\.7 \[`)
	expect(density, `(?m)^gpt-oss-120b\s+92\s+5\.3 \[`)

	fatal := section("4. Fatal and non-fatal modes")
	gemini := block(fatal, "gemini-3-flash:")
	// +52%: 50% of failed runs against 32.9% of successful ones. At 24
	// failures and 76 successes Fisher's test does not find it significant
	// (p = 0.15), so the rule does not call it fatal: the study's strongest
	// predictor, honestly reported as inconclusive at this size.
	expect(gemini, `(?m)^FM-3\.3 Incorrect verification\s+50%\s+33%\s+\+17 pts\s+\+52%\s+2\.0 \[0\.80–5\.2\]\s+0\.15\s+\S+\s+inconclusive$`)
	kimi := block(fatal, "kimi-k2:")
	expect(kimi, `(?m)^FM-2\.6 Reasoning-action mismatch\s+92%\s+10%\s.*\sfatal$`)
	expect(kimi, `(?m)^FM-1\.3 Step repetition\s+91%\s+93%\s.*\snon-fatal$`)

	prevalence := block(section("2. Mode prevalence"), "kimi-k2:")
	expect(prevalence, `(?m)^FM-2\.6 Reasoning-action mismatch\s+72/105 69% \[\d+–\d+\]\s+69/75 92% \[84–96\]\s+3/30 10% \[`)
	expect(prevalence, `(?m)^FM-1\.3 Step repetition\s.*\s28/30 93% \[79–98\]$`)

	// Cascades start with the first mode listed; GPT-OSS's all start with FM-2.6.
	expect(block(section("6. Cascades"), "gpt-oss-120b"), `(?m)^FM-2\.6 Reasoning-action mismatch\s+92\s+4\.3 \[`)
	// Kimi's fatal FM-2.6 calls for context hygiene.
	expect(section("7. Interventions"), `(?m)^1\. Context hygiene: reaches 73 of 75 failed traces \(97%\)\n.*\n(.*\n)?FM-2\.6 Reasoning-action mismatch\s+92%\s+10%\s+\+820%`)
	if t.Failed() {
		t.Log(text)
	}
}
