package discover

import (
	"fmt"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

func intp(n int) *int { return &n }

// rolloutSteps are steps as a store picks them from a Codex rollout of
// the Zero agent: two failed results, the last three calls (one of them
// with arguments cut short), the last step and a finding's site.
func rolloutSteps() []trace.Step {
	return []trace.Step{
		{Index: 7, Kind: trace.KindToolResult, Tool: "shell", ExitCode: intp(1), IsError: true,
			Text: "head: /Users/noahz/Documents/ITBench-Lite/snapshots/sre/alerts/alerts_at_2025-12-15T17-30-49.329092.json: No such file or directory\n"},
		{Index: 12, Kind: trace.KindToolCall, Tool: "shell", Args: `{"command":["bash","-lc","kubectl get pods -n otel-demo"],"workdir":"/tmp"}`},
		{Index: 42, Kind: trace.KindToolResult, Tool: "apply_patch", IsError: true,
			Text: "failed to parse function arguments: EOF while parsing a string at line 2 column 1502"},
		{Index: 45, Kind: trace.KindToolResult, Tool: "apply_patch", IsError: true,
			Text: "failed to parse function arguments: EOF while parsing a string at line 2 column 1254"},
		{Index: 50, Kind: trace.KindToolCall, Tool: "shell", Args: `{"command":["bash","-lc","cat <<EOF > /Users/noahz/agent_outputs/2/1/agent_output.json\n{\"entit`},
		{Index: 52, Kind: trace.KindToolCall, Tool: "apply_patch", Args: `*** Begin Patch`},
		{Index: 55, Kind: trace.KindToolResult, Tool: "shell", ExitCode: intp(0), Text: "ok"},
		{Index: 60, Kind: trace.KindMessage, Role: trace.RoleAssistant, Text: "\nI wrote agent_output.json with 3 entities.\nDone."},
	}
}

func TestSignatures(t *testing.T) {
	all := map[Kind]bool{KindError: true, KindEnding: true, KindFinding: true}
	got := Signatures(rolloutSteps(), []Site{{Mode: "FM-3.3", Step: 60}, {Mode: "FM-1.3", Step: -1}, {Mode: "FM-3.3", Step: 60}},
		SignatureOptions{Kinds: all, LastCalls: 3})
	var lines []string
	for _, o := range got {
		lines = append(lines, fmt.Sprintf("%s @%d %q", o.Signature, o.Step, o.Quote))
	}
	want := []string{
		`errors shell: head: <path>/alerts_at_<time>.json: No such file or directory @7 "head: /Users/noahz/Documents/ITBench-Lite/snapshots/sre/alerts/alerts_at_2025-12-15T17-30-49.329092.json: No such file or directory"`,
		// The second apply_patch failure is the same signature: counted once.
		`errors apply_patch: failed to parse function arguments: EOF while parsing a string at line <num> column <num> @42 "failed to parse function arguments: EOF while parsing a string at line 2 column 1502"`,
		`endings shell:kubectl get → shell:cat → apply_patch ⇒ ends with a message, no answer @60 "I wrote agent_output.json with 3 entities."`,
		`endings … ⇒ ends with a message, no answer @60 "I wrote agent_output.json with 3 entities."`,
		`findings FM-3.3: message: I wrote agent_output.json with <num> entities. @60 "I wrote agent_output.json with 3 entities."`,
		`findings FM-1.3: (unlocated) @-1 ""`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("signatures:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}

	only := Signatures(rolloutSteps(), nil, SignatureOptions{Kinds: map[Kind]bool{KindEnding: true}, LastCalls: 1})
	if len(only) != 2 || only[0].Signature.Template != "apply_patch ⇒ ends with a message, no answer" {
		t.Errorf("endings of the last call: %+v", only)
	}
}

func TestEndings(t *testing.T) {
	for _, c := range []struct {
		steps []trace.Step
		want  string
	}{
		{[]trace.Step{{Index: 3, Kind: trace.KindFinal, Text: "{}"}}, "(no tool call) ⇒ ends with a final answer"},
		{[]trace.Step{{Index: 1, Kind: trace.KindToolCall, Tool: "shell", Args: `{"command":"jq . agent_output.json"}`},
			{Index: 2, Kind: trace.KindToolResult, Tool: "shell", ExitCode: intp(5), Text: "jq: parse error"}},
			"shell:jq ⇒ ends with a failed tool result"},
		{[]trace.Step{{Index: 1, Kind: trace.KindToolCall, Tool: "", Args: `{}`}, {Index: 9, Kind: trace.KindError, Text: "turn aborted"}},
			"(unnamed tool) ⇒ ends with an error"},
	} {
		if got := ending(c.steps, 3).Signature.Template; got != c.want {
			t.Errorf("ending = %q, want %q", got, c.want)
		}
	}
}

func TestCommandHead(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{`{"command":["bash","-lc","kubectl get pods -n otel-demo"]}`, "kubectl get"},
		{`{"command":["bash","-lc","cat <<EOF > /x/agent_output.json\n{\"a`, "cat"},
		{`{"cmd":"python3 -c 'import pandas'"}`, "python3"},
		{`{"command":"cd /tmp && ls"}`, "cd"},
		{`{"path":"x"}`, ""},
		{`{"input":"*** Begin Patch\n*** Update File: a.json"}`, ""},
		{`not json`, ""},
	} {
		if got := commandHead(command(c.args)); got != c.want {
			t.Errorf("head of %s = %q, want %q", c.args, got, c.want)
		}
	}
}
