package detect

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// RateLimited finds SYS-3: a request refused by a rate limit or quota.
var RateLimited = &Detector{
	Name: "rate-limited",
	Mode: "SYS-3",
	Doc: `A request of the run was refused because a rate limit, quota or usage cap was reached.
It reads the run's error events, harness and system events, and failed tool results for the wording
providers use ("rate limit", "429 Too Many Requests", "quota exceeded", "usage limit").
All such steps are one finding; confidence 0.9, or 0.7 when the only evidence is a failed tool
result (the agent's own script may have hit a third party's limit).
Blind spots: limits reported in words this list lacks, limits a harness retried silently, long
harness logs in which the message is not on the first line, and tool output past its first 512
bytes.`,
	Run: runRateLimited,
}

// rateLimitPattern is what a refusal for a rate limit or quota says;
// infrastructure-error leaves it to this detector.
const rateLimitPattern = `(?i)\brate[ _-]?limit(?:ed|s|ing)?\b|\btoo many requests\b|\b(?:quota|usage limit)\b[^\n]{0,40}\b(?:exceeded|exhausted|reached|hit)\b|\bexceeded (?:your|the) (?:current )?quota\b|\byou'?ve hit your usage limit\b`

var rateLimitText = text.Regexp(rateLimitPattern)

func runRateLimited(p *Pass) {
	reportHarnessText(p, matchText(rateLimitText(), nil, "limit", "many requests", "quota"), 0.9, 0.7, "The run was refused by a rate limit or quota")
}

// textMatcher says where in a step's harness report the evidence of a
// failure starts, or -1.
type textMatcher func(s *trace.Step, r harnessText) int

// matchText matches re in the report, unless except matches too. The report
// must hold one of words (lower case), a cheap test that spares running re
// on reports that cannot match.
func matchText(re, except *regexp.Regexp, words ...string) textMatcher {
	return func(_ *trace.Step, r harnessText) int {
		if !containsAny(r.lower, words) {
			return -1
		}
		loc := re.FindStringIndex(r.text)
		if loc == nil || (except != nil && except.MatchString(r.text)) {
			return -1
		}
		return loc[0]
	}
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// reportHarnessText reports every step whose harness report matches, as one
// finding: confidence conf, or toolConf when only failed tool results match.
func reportHarnessText(p *Pass, match textMatcher, conf, toolConf float64, what string) {
	t := p.Trace
	var steps []int
	quote := ""
	onlyTools := true
	for _, r := range p.facts.harnessReports() {
		s := &t.Steps[r.step]
		at := match(s, r)
		if at < 0 {
			continue
		}
		steps = append(steps, r.step)
		if quote == "" {
			quote = lineAround(r.text, at, 160)
		}
		if s.Kind != trace.KindToolResult {
			onlyTools = false
		}
	}
	if len(steps) == 0 {
		return
	}
	c := conf
	if onlyTools {
		c = toolConf
	}
	p.Report(trace.Finding{
		Steps:       steps,
		Quote:       quote,
		Confidence:  c,
		Explanation: fmt.Sprintf("%s %s, first at step %d; this is the run's infrastructure, not a failure mode of the agent.", what, times(len(steps)), steps[0]),
	})
}
