package judge

import (
	"fmt"
	"slices"
	"strings"

	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// SystemOnly reports whether the findings of source on t (the detectors')
// name at least one system failure (a SYS code) and no MAST mode, and if so
// why the trace is not worth a judge's call: a run that the model endpoint
// or the harness cut short holds no agent behaviour for MAST to describe,
// and a judge shown one is pushed into labelling the harness's retries as
// the agent's failures.
func SystemOnly(t *trace.Trace, source string) (string, bool) {
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
