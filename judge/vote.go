package judge

import (
	"fmt"
	"math"

	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// verdicts turns a trace's judgements (one per sample) into findings of
// source, one per mode, by majority: present when more than half of the
// samples found the mode, absent when fewer than half did, unsure on a tie.
// A present (or tied) mode carries the evidence of its earliest located
// occurrence among the samples that found it. agreement is, per mode, the
// share of samples that voted with the majority.
func verdicts(samples []*Answer, source string) (findings []trace.Finding, agreement map[string]float64) {
	agreement = map[string]float64{}
	k := len(samples)
	for _, mode := range taxonomy.MAST.Modes {
		var found, missed []ModeAnswer
		for _, s := range samples {
			if a := s.Modes[mode.Code]; a.Present {
				found = append(found, a)
			} else {
				missed = append(missed, a)
			}
		}
		f := trace.Finding{Mode: mode.Code, Source: source, Taxonomy: taxonomy.Version}
		var pick ModeAnswer
		switch {
		case 2*len(found) > k:
			f.Verdict, pick = trace.Present, earliest(found)
		case 2*len(found) < k:
			f.Verdict, pick = trace.Absent, missed[0]
		default:
			f.Verdict, pick = trace.Unsure, earliest(found)
		}
		f.Steps, f.Quote, f.Explanation = pick.Steps, pick.Quote, pick.Explanation
		f.Confidence = math.Round(pick.Confidence*100) / 100
		if k > 1 {
			f.Explanation = fmt.Sprintf("%s (%d of %d samples found it)", f.Explanation, len(found), k)
		}
		agreement[mode.Code] = float64(max(len(found), len(missed))) / float64(k)
		findings = append(findings, f)
	}
	return findings, agreement
}

// earliest returns the answer whose evidence comes first in the trace.
func earliest(found []ModeAnswer) ModeAnswer {
	best := found[0]
	for _, a := range found[1:] {
		if firstStep(a.Steps) < firstStep(best.Steps) {
			best = a
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
