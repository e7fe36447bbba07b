package judge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// SystemOnly reports whether the findings of source on t (the detectors')
// name at least one system failure (a SYS code) and no MAST mode, in a run
// where the agent never did anything (no message with text, reasoning or
// tool call), and if so why the trace is not worth a judge's call: a run
// that the model endpoint or the harness cut short before the agent acted
// holds no behaviour for MAST to describe, and a judge shown one is pushed
// into labelling the harness's retries as the agent's failures. A run where
// the agent did act before a system failure (a chat with an empty turn, a
// run that stopped on the model's silence mid-investigation) is judged: the
// judge can answer that it is a system failure.
func SystemOnly(t *trace.Trace, source string) (string, bool) {
	for i := range t.Steps {
		s := &t.Steps[i]
		if trace.ByAgent(s) && (s.Kind != trace.KindMessage || strings.TrimSpace(s.Text) != "") {
			return "", false
		}
	}
	steps := map[string][]int{}
	var codes []string
	for _, f := range t.Findings {
		if f.Source != source || f.Verdict != trace.Present {
			continue
		}
		if taxonomy.IsMAST(f.Mode) {
			return "", false
		}
		if _, ok := taxonomy.System.Mode(f.Mode); !ok {
			continue
		}
		if _, seen := steps[f.Mode]; !seen {
			codes = append(codes, f.Mode)
		}
		steps[f.Mode] = append(steps[f.Mode], f.Steps...)
	}
	if len(codes) == 0 {
		return "", false
	}
	slices.Sort(codes)
	parts := make([]string, len(codes))
	for i, code := range codes {
		parts[i] = code + " " + taxonomy.Name(code)
		if s := steps[code]; len(s) > 0 {
			slices.Sort(s)
			parts[i] += " at " + spanOf(slices.Compact(s))
		}
	}
	return fmt.Sprintf("skipped: only system failures (%s); no agent behaviour to judge", strings.Join(parts, "; ")), true
}
