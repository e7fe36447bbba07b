package detect

import (
	"fmt"
	"testing"

	"github.com/faultline/faultline/trace"
)

func TestRepeatedKnownError(t *testing.T) {
	sandbox := func(cmd string) string {
		return fmt.Sprintf(`fail shell {"command":["%s"]} => sandbox-exec: execvp() of '%s' failed: No such file or directory`, cmd, cmd)
	}
	ok := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf(`call shell {"command":["ls","d%d"]} => f%d`, i, i)
		}
		return out
	}
	runCases(t, RepeatedKnownError, []detCase{
		{name: "no failures", trace: build(ok(10)...)},
		{name: "quick retries are not forgetting", trace: buildParts(sandbox("cat a | b"), sandbox("cat c | d"), ok(9))},
		{name: "the same failure long after getting past it",
			trace: buildParts(sandbox("cat a | b"), ok(8), sandbox("grep x | y")),
			want:  [][]int{{0, 18, 19}}, conf: 0.6},
		{name: "recurrences after the gap all count",
			trace: buildParts(sandbox("cat a | b"), sandbox("cat c | d"), ok(8), sandbox("grep x | y"), sandbox("echo z > f")),
			want:  [][]int{{0, 2, 20, 22, 21}}, conf: 0.7},
		{name: "a long gap without a success of the tool is not a relapse",
			trace: buildParts(sandbox("cat a | b"), `call mcp__srv__logs {"q":1} => a`, `call mcp__srv__logs {"q":2} => b`, `call mcp__srv__logs {"q":3} => c`,
				`call mcp__srv__logs {"q":4} => d`, `call mcp__srv__logs {"q":5} => e`, `call mcp__srv__logs {"q":6} => f`,
				`call mcp__srv__logs {"q":7} => g`, `call mcp__srv__logs {"q":8} => h`, sandbox("grep x | y"))},
		{name: "different failures do not mix",
			trace: buildParts(sandbox("cat a | b"), ok(8), `fail shell {"cmd":"jq . f"} => jq: parse error: Invalid literal at line 8, column 12`)},
	})
}

// buildParts builds a trace from script lines given one by one or in slices.
func buildParts(parts ...any) *trace.Trace {
	var lines []string
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			lines = append(lines, p)
		case []string:
			lines = append(lines, p...)
		}
	}
	return build(lines...)
}
