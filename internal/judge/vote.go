package judge

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// verdicts turns a trace's judgements (one per sample) into findings of
// source. When more than half of the samples answered a system failure, the
// trace is one: a single finding of its SYS code and no MAST verdict, since
// MAST describes an agent's behaviour and there was none to judge.
// Otherwise the MAST verdicts are those of the samples that judged the
// agent's behaviour, one finding per mode, by majority: present when more
// than half of them found the mode, absent when fewer than half did, unsure
// on a tie; a system failure answered by exactly half of the samples is
// added as unsure. A present (or tied) verdict carries the evidence of its
// earliest located occurrence among the samples that found it. agreement
// is, per code, the share of samples that voted with the majority.
func verdicts(samples []*Answer, source string) (findings []trace.Finding, agreement map[string]float64) {
	agreement = map[string]float64{}
	var sys []ModeAnswer
	var codes []string
	var judged []*Answer
	for _, s := range samples {
		if s.System != nil {
			sys, codes = append(sys, s.System.ModeAnswer), append(codes, s.System.Code)
		} else {
			judged = append(judged, s)
		}
	}
	if k := len(samples); len(sys) > 0 {
		i := earliest(sys)
		code := codes[i]
		f := finding(code, taxonomy.SystemVersion, source, trace.Present, sys[i])
		if k > 1 {
			f.Explanation = fmt.Sprintf("%s (%d of %d samples answered a system failure)", f.Explanation, len(sys), k)
		}
		agreement[code] = float64(max(len(sys), len(judged))) / float64(k)
		switch {
		case 2*len(sys) > k:
			return []trace.Finding{f}, agreement
		case 2*len(sys) == k:
			f.Verdict = trace.Unsure
			findings = append(findings, f)
		}
	}
	k := len(judged)
	for _, mode := range taxonomy.MAST.Modes {
		var found, missed []ModeAnswer
		for _, s := range judged {
			if a := s.Modes[mode.Code]; a.Present {
				found = append(found, a)
			} else {
				missed = append(missed, a)
			}
		}
		var f trace.Finding
		switch {
		case 2*len(found) > k:
			f = finding(mode.Code, taxonomy.Version, source, trace.Present, found[earliest(found)])
		case 2*len(found) < k:
			f = finding(mode.Code, taxonomy.Version, source, trace.Absent, missed[0])
		default:
			f = finding(mode.Code, taxonomy.Version, source, trace.Unsure, found[earliest(found)])
		}
		if k > 1 {
			f.Explanation = fmt.Sprintf("%s (%d of %d samples found it)", f.Explanation, len(found), k)
		}
		agreement[mode.Code] = float64(max(len(found), len(missed))) / float64(k)
		findings = append(findings, f)
	}
	return findings, agreement
}

// finding is the verdict v on code, with the evidence of a.
func finding(code, taxonomyVersion, source string, v trace.Verdict, a ModeAnswer) trace.Finding {
	return trace.Finding{Mode: code, Source: source, Taxonomy: taxonomyVersion, Verdict: v, Steps: a.Steps, Quote: a.Quote, Explanation: a.Explanation,
		Confidence: math.Round(a.Confidence*100) / 100}
}

// systemNote says, for the judge record, what became of the MAST verdicts
// when samples answered a system failure: none kept (naming those that had
// been marked present), or kept from the samples that judged the agent's
// behaviour. It is "" when no sample answered one.
func systemNote(samples []*Answer) string {
	n := 0
	var sys []string
	for _, s := range samples {
		if s.System == nil {
			continue
		}
		n++
		if !slices.Contains(sys, s.System.Code) {
			sys = append(sys, s.System.Code)
		}
	}
	if n == 0 {
		return ""
	}
	k := len(samples)
	if 2*n > k {
		note := fmt.Sprintf("[System failure (%s) answered: no MAST verdict is kept.", strings.Join(sys, ", "))
		if dropped := claimedModes(samples); len(dropped) > 0 {
			note += fmt.Sprintf(" Dropped beside it: %s, marked present.", strings.Join(dropped, ", "))
		}
		return note + "]"
	}
	return fmt.Sprintf("[%d of %d samples answered a system failure (%s); the MAST verdicts are the other %d samples'.]", n, k, strings.Join(sys, ", "), k-n)
}

// earliest returns the index of the answer whose evidence comes first in
// the trace.
func earliest(found []ModeAnswer) int {
	best := 0
	for i, a := range found {
		if firstStep(a.Steps) < firstStep(found[best].Steps) {
			best = i
		}
	}
	return best
}

// taskSuccess is the majority guess of the samples; a tie is "unknown".
func taskSuccess(samples []*Answer) string {
	counts := map[string]int{}
	for _, s := range samples {
		counts[s.TaskSuccess]++
	}
	best, top, leaders := "unknown", 0, 0
	for _, v := range taskSuccessValues {
		switch c := counts[v]; {
		case c > top:
			best, top, leaders = v, c, 1
		case c == top && c > 0:
			leaders++
		}
	}
	if leaders > 1 {
		return "unknown"
	}
	return best
}
