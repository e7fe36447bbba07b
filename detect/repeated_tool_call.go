package detect

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/faultline/faultline/trace"
)

// RepeatedToolCall finds FM-1.3 step repetition in its plainest form.
var RepeatedToolCall = &Detector{
	Name: "repeated-tool-call",
	Mode: "FM-1.3",
	Doc: `The same tool is called again with the same arguments and returns the same output.
Arguments are compared after normalisation (JSON re-encoded with sorted keys, whitespace collapsed);
outputs are compared whitespace-normalised. Each group of identical call-and-output pairs is one
finding citing every repeat. Confidence grows with the number of repeats.
Blind spots: near-identical calls (a changed limit, a reordered filter) and repeats whose output
changed are not reported; a deliberate re-check after the system changed is still reported when
its output is identical, since the trace alone cannot tell that nothing was expected to change.`,
	Run: runRepeatedToolCall,
}

func runRepeatedToolCall(p *Pass) {
	t := p.Trace
	type key struct{ tool, args, output string }
	groups := map[key][]int{}
	var order []key
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Kind != trace.KindToolCall {
			continue
		}
		res := t.Result(i)
		if res == nil {
			continue // no output to compare
		}
		k := key{s.Tool, normalizeArgs(s.Args), trace.NormalizeSpace(res.Text)}
		if _, seen := groups[k]; !seen {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range order {
		calls := groups[k]
		if len(calls) < 2 {
			continue
		}
		first := &t.Steps[calls[0]]
		quote := quoteFrom(first.Args, 160)
		if quote == "" || quote == "{}" {
			quote = first.Tool
		}
		repeats := len(calls) - 1
		p.Report(trace.Finding{
			Steps:       calls,
			Quote:       quote,
			Confidence:  min(0.95, 0.6+0.1*float64(repeats-1)),
			Explanation: fmt.Sprintf("%s was called %d times with the same arguments and returned the same output each time (first at step %d); the %s added no information.", first.Tool, len(calls), calls[0], plural(repeats, "repeat", "repeats")),
		})
	}
}

// normalizeArgs makes equivalent argument strings equal: JSON is decoded
// and re-encoded (sorting keys), and whitespace is collapsed.
func normalizeArgs(args string) string {
	var v any
	if err := json.Unmarshal([]byte(args), &v); err == nil {
		if b, err := json.Marshal(v); err == nil {
			args = string(b)
		}
	}
	return strings.Join(strings.Fields(args), " ")
}
