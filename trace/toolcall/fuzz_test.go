package toolcall

import (
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

// FuzzWriteOf reads arbitrary call arguments as every tool would: it must
// not panic, and a write it recognises must be of a known kind, with
// content only where the call shows the whole file.
func FuzzWriteOf(f *testing.F) {
	for _, seed := range []string{
		`{"command":["bash","-lc","cat <<'EOF' > /w/agent_output.json\n{}\nEOF"]}`,
		`{"input":"*** Begin Patch\n*** Update File: agent_output.json\n@@ x\n-a\n+b\n*** End Patch"}`,
		`{"command":"echo '{}' > agent_output.json; jq . agent_output.json"}`,
		`{"command":["python3","-c","open('agent_output.json', 'w')"]}`,
		`{"path":"agent_output.json","old_str":"a","new_str":"b"}`,
		`cat <<- > agent_output.json`,
		`> agent_output.json <<"E`,
		`tee -a agent_output.json`,
	} {
		f.Add("shell", seed)
	}
	f.Fuzz(func(t *testing.T, tool, args string) {
		w, ok := WriteOf(&trace.Step{Kind: trace.KindToolCall, Tool: tool, Args: args}, "agent_output.json")
		if !ok {
			return
		}
		if w.Change < Whole || w.Change > Deleted {
			t.Fatalf("unknown change %d", w.Change)
		}
		if w.Content != "" && w.Change != Whole {
			t.Fatalf("content on a %d write", w.Change)
		}
		if !strings.Contains(args, "agent_output.json") {
			t.Fatal("a write recognised in arguments that do not name the file")
		}
	})
}

// FuzzFinal follows a file through calls with arbitrary arguments and
// outputs: it must not panic, and what it reports must point at steps that
// exist.
func FuzzFinal(f *testing.F) {
	f.Add(`{"input":"*** Begin Patch\n*** Add File: agent_output.json\n+{\"a\":1}\n*** End Patch"}`, "Done", 0,
		`{"input":"*** Begin Patch\n*** Update File: agent_output.json\n@@\n-{\"a\":1}\n+{\"a\":2}\n*** End Patch"}`, "Done", 0)
	f.Add(`{"command":["python3","-c","open('agent_output.json','w')"]}`, "", 0, `{"command":["jq",".","agent_output.json"]}`, "{\"x\":[1]}", 0)
	f.Add(`{"command":"cat > agent_output.json <<EOF\n{}\nEOF"}`, "denied", 71, `{"command":"cat agent_output.json"}`, "Total output lines: 1\n\n{}", 0)
	f.Fuzz(func(t *testing.T, args1, out1 string, exit1 int, args2, out2 string, exit2 int) {
		tr := &trace.Trace{ID: "f"}
		for i, c := range []struct {
			args, out string
			exit      int
		}{{args1, out1, exit1}, {args2, out2, exit2}} {
			id := string(rune('a' + i))
			exit := c.exit
			tr.Append(trace.Step{Kind: trace.KindToolCall, Tool: "shell", Args: c.args, CallID: id})
			tr.Append(trace.Step{Kind: trace.KindToolResult, CallID: id, Text: c.out, ExitCode: &exit, IsError: exit != 0})
		}
		tr.Link()
		file := Final(tr, "agent_output.json")
		for _, s := range append(append(append([]int{}, file.Attempts...), file.Writes...), file.Reads...) {
			if s < 0 || s >= len(tr.Steps) || tr.Steps[s].Kind != trace.KindToolCall {
				t.Fatalf("step %d is not a call of the run", s)
			}
		}
		if file.Known != (file.At >= 0) || (file.Blind >= 0 && file.Known) {
			t.Fatalf("inconsistent: %+v", file)
		}
	})
}

// FuzzApplyHunks applies arbitrary patch sections to arbitrary content.
func FuzzApplyHunks(f *testing.F) {
	f.Add("a\nb\nc\n", "@@\n a\n-b\n+B")
	f.Add("", "@@\n+x")
	f.Add("x\n", "@@ y\n-x")
	f.Fuzz(func(t *testing.T, content, patch string) {
		if _, err := applyHunks(content, hunks(strings.Split(patch, "\n"))); err != nil && err != errPatch {
			t.Fatalf("unexpected error %v", err)
		}
	})
}
