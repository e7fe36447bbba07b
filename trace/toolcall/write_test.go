package toolcall

import (
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

func TestCommand(t *testing.T) {
	for _, tt := range []struct{ args, want string }{
		{`{"command":["bash","-lc","ls -R /data"]}`, "ls -R /data"},
		{`{"command":["bash","-c","a && b"],"workdir":"/"}`, "a && b"},
		{`{"command":["jq",".","agent_output.json"]}`, "jq . agent_output.json"},
		{`{"command":"grep x f"}`, "grep x f"},
		{`{"cmd":"cat f"}`, "cat f"},
		{`{"input":"*** Begin Patch"}`, "*** Begin Patch"},
		{`not json at all`, "not json at all"},
		{`{"query":"x"}`, `{"query":"x"}`},
	} {
		if got := Command(tt.args); got != tt.want {
			t.Errorf("Command(%s) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestWriteOf(t *testing.T) {
	tests := []struct {
		name, tool, args string
		change           Change
		content          string
		found            bool
	}{
		{"patch add", "apply_patch", `{"input":"*** Begin Patch\n*** Add File: agent_output.json\n+{\n+  \"a\": 1\n+}\n*** End Patch"}`, Whole, "{\n  \"a\": 1\n}\n", true},
		{"patch update", "apply_patch", `{"input":"*** Begin Patch\n*** Update File: /w/agent_output.json\n@@\n-x\n+y\n*** End Patch"}`, Patched, "", true},
		{"patch delete", "apply_patch", `{"input":"*** Begin Patch\n*** Delete File: agent_output.json\n*** End Patch"}`, Deleted, "", true},
		{"raw patch", "apply_patch", "*** Begin Patch\n*** Add File: out/agent_output.json\n+[]\n*** End Patch", Whole, "[]\n", true},
		{"patch through the shell", "shell", `{"command":["apply_patch","*** Begin Patch\n*** Add File: agent_output.json\n+{}\n*** End Patch"]}`, Whole, "{}\n", true},
		{"heredoc", "shell", `{"command":["bash","-lc","cat <<'EOF' > /w/agent_output.json\n{\"a\":2}\nEOF"]}`, Whole, "{\"a\":2}\n", true},
		{"heredoc redirect first", "shell", `{"command":"cat > agent_output.json << EOF\n{}\nEOF\n"}`, Whole, "{}\n", true},
		{"heredoc as argv[0]", "shell", `{"command":["cat <<EOF > /w/agent_output.json\n{}\nEOF"]}`, Whole, "{}\n", true},
		{"heredoc without its delimiter", "shell", `{"command":"cat <<EOF > agent_output.json\n{}\n"}`, Opaque, "", true},
		{"heredoc into tee", "shell", `{"command":"cat <<'EOF' | tee agent_output.json\n{\"t\":1}\nEOF"}`, Whole, "{\"t\":1}\n", true},
		{"echo", "shell", `{"command":["bash","-lc","echo '{\"entities\": []}' > /w/agent_output.json"]}`, Whole, "{\"entities\": []}\n", true},
		{"echo with expansion", "shell", `{"command":"echo \"$X\" > agent_output.json"}`, Opaque, "", true},
		{"command output redirected", "shell", `{"command":"jq -n '{}' > agent_output.json"}`, Opaque, "", true},
		{"append", "shell", `{"command":"echo '{}' >> agent_output.json"}`, Opaque, "", true},
		{"python json.dump", "shell", `{"command":["/usr/bin/python3","-c","import json\nwith open('/w/agent_output.json', 'w') as f: json.dump({}, f)"]}`, Opaque, "", true},
		{"python reads", "shell", `{"command":["python3","-c","import json; print(json.load(open('agent_output.json')))"]}`, 0, "", false},
		{"copy onto", "shell", `{"command":"cp /tmp/draft.json agent_output.json"}`, Opaque, "", true},
		{"copy from", "shell", `{"command":"cp agent_output.json /tmp/backup.json"}`, 0, "", false},
		{"sed in place", "shell", `{"command":"sed -i 's/a/b/' agent_output.json"}`, Opaque, "", true},
		{"touch", "shell", `{"command":["touch","/w/agent_output.json"]}`, Touched, "", true},
		{"file tool", "mcp__fs__write_file", `{"path":"/w/agent_output.json","content":"{\"x\":1}"}`, Whole, `{"x":1}`, true},
		{"editor replace", "str_replace_based_edit_tool", `{"command":"str_replace","path":"agent_output.json","old_str":"a","new_str":"b"}`, Edited, "", true},
		{"editor view", "str_replace_based_edit_tool", `{"command":"view","path":"agent_output.json"}`, 0, "", false},
		{"read only", "shell", `{"command":["cat","agent_output.json"]}`, 0, "", false},
		{"stderr only", "shell", `{"command":"jq . agent_output.json 2> err.txt"}`, 0, "", false},
		{"other file", "shell", `{"command":["bash","-lc","echo '{}' > agent_output.json.bak"]}`, 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, ok := WriteOf(&trace.Step{Kind: trace.KindToolCall, Tool: tt.tool, Args: tt.args}, "agent_output.json")
			if ok != tt.found || (ok && (w.Change != tt.change || w.Content != tt.content)) {
				t.Errorf("got %+v %v, want change %d content %q found %v", w, ok, tt.change, tt.content, tt.found)
			}
		})
	}
}

func TestApplyHunks(t *testing.T) {
	base := "{\n  \"a\": [\n    1\n  ],\n  \"b\": 2\n}\n"
	tests := []struct {
		name  string
		patch string
		want  string
		err   bool
	}{
		{"replace a line", "@@\n   \"b\": 2\n-}\n+, \"c\": 3 }", "{\n  \"a\": [\n    1\n  ],\n  \"b\": 2\n, \"c\": 3 }\n", false},
		{"add after context", "@@\n     1\n+    ,2\n   ],", "{\n  \"a\": [\n    1\n    ,2\n  ],\n  \"b\": 2\n}\n", false},
		{"anchor then change", "@@ \"a\": [\n-    1\n+    9", "{\n  \"a\": [\n    9\n  ],\n  \"b\": 2\n}\n", false},
		{"whitespace differences tolerated", "@@\n-\"b\": 2   \n+\"b\": 3", "{\n  \"a\": [\n    1\n  ],\n\"b\": 3\n}\n", false},
		{"context not there", "@@\n-\"z\": 1\n+\"z\": 2", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := applyHunks(base, hunks(strings.Split(tt.patch, "\n")))
			if (err != nil) != tt.err || got != tt.want {
				t.Errorf("got %q, %v; want %q (error %v)", got, err, tt.want, tt.err)
			}
		})
	}
}

// step is one call and its result for a hand-built run: exit -1 leaves the
// call without a result.
type step struct {
	tool, args string
	exit       int
	out        string
}

func runOf(steps ...step) *trace.Trace {
	t := &trace.Trace{ID: "t"}
	for i, s := range steps {
		id := string(rune('a' + i))
		t.Append(trace.Step{Kind: trace.KindToolCall, Tool: s.tool, Args: s.args, CallID: id})
		if s.exit >= 0 {
			exit := s.exit
			t.Append(trace.Step{Kind: trace.KindToolResult, CallID: id, ExitCode: &exit, IsError: exit != 0, Text: s.out})
		}
	}
	t.Link()
	return t
}

func TestFinal(t *testing.T) {
	const (
		addA   = `{"input":"*** Begin Patch\n*** Add File: agent_output.json\n+{\"v\": \"a\"}\n*** End Patch"}`
		echoB  = `{"command":"echo '{\"v\": \"b\"}' > agent_output.json"}`
		script = `{"command":["python3","-c","import json; json.dump({'v':'c'}, open('agent_output.json','w'))"]}`
		jq     = `{"command":["jq",".","agent_output.json"]}`
		update = `{"input":"*** Begin Patch\n*** Update File: agent_output.json\n@@\n-{\"v\": \"a\"}\n+{\"v\": \"a2\"}\n*** End Patch"}`
	)
	tests := []struct {
		name     string
		run      *trace.Trace
		known    bool
		content  string
		at       int
		evidence string
		writes   []int
		blind    int
	}{
		{"a failed write does not count", runOf(step{"apply_patch", addA, 0, "Done"}, step{"shell", echoB, 71, "sandbox-exec: execvp() failed"}),
			true, "{\"v\": \"a\"}\n", 0, "written by step 0 (apply_patch)", []int{0}, -1},
		{"a write without a result does not count", runOf(step{"apply_patch", addA, 0, "Done"}, step{"shell", echoB, -1, ""}),
			true, "{\"v\": \"a\"}\n", 0, "written by step 0 (apply_patch)", []int{0}, -1},
		{"a script, then printed", runOf(step{"shell", script, 0, ""}, step{"shell", jq, 0, "Total output lines: 3\n\n{\n  \"v\": \"c\"\n}"}),
			true, "{\n  \"v\": \"c\"\n}\n", 2, "printed by step 2 (jq)", []int{0}, -1},
		{"a script never printed", runOf(step{"apply_patch", addA, 0, "Done"}, step{"shell", script, 0, ""}),
			false, "", -1, "", []int{0, 2}, 2},
		{"a print confirms and keeps the written text", runOf(step{"apply_patch", addA, 0, "Done"}, step{"shell", jq, 0, "{\n  \"v\": \"a\"\n}"}),
			true, "{\"v\": \"a\"}\n", 2, "written by step 0 (apply_patch), then printed by step 2 (jq)", []int{0}, -1},
		{"an update patch applied", runOf(step{"apply_patch", addA, 0, "Done"}, step{"apply_patch", update, 0, "Done"}),
			true, "{\"v\": \"a2\"}\n", 2, "patched by step 2 (apply_patch) over the version written by step 0 (apply_patch)", []int{0, 2}, -1},
		{"an update patch over an unseen version", runOf(step{"shell", script, 0, ""}, step{"apply_patch", update, 0, "Done"}),
			false, "", -1, "", []int{0, 2}, 2},
		{"a print that is not JSON is no evidence", runOf(step{"shell", script, 0, ""}, step{"shell", jq, 0, "parse error"}),
			false, "", -1, "", []int{0}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Final(tt.run, "agent_output.json")
			if f.Known != tt.known || f.Content != tt.content || f.At != tt.at || f.Evidence != tt.evidence ||
				!slices.Equal(f.Writes, tt.writes) || f.Blind != tt.blind || (f.Blind >= 0) == (f.Why == "") {
				t.Errorf("got %+v", f)
			}
		})
	}
}

func TestRuns(t *testing.T) {
	for _, tt := range []struct {
		cmd, name string
		want      bool
	}{
		{"jq . agent_output.json", "jq", true},
		{"/usr/bin/jq . f", "jq", true},
		{"cat f | jq .", "jq", true},
		{"sudo jq . f", "jq", true},
		{"bash -lc 'jq . f'", "jq", true},
		{"echo use jq to check", "jq", false},
		{"jqx . f", "jq", false},
		{"cat notes-about-jq.txt", "jq", false},
		{"ls && kubectl apply -f x", "kubectl", true},
	} {
		if got := Runs(tt.cmd, tt.name); got != tt.want {
			t.Errorf("Runs(%q, %q) = %v, want %v", tt.cmd, tt.name, got, tt.want)
		}
	}
}

func TestWrittenFiles(t *testing.T) {
	for _, tt := range []struct {
		cmd  string
		want []string
	}{
		{"cat <<EOF > /w/a.py\nprint(1)\nEOF", []string{"/w/a.py"}},
		{`echo "x" >> out.txt 2>&1`, []string{"out.txt"}},
		{"grep x f 2>/dev/null | sort > sorted.txt", []string{"sorted.txt"}},
		{"*** Begin Patch\n*** Add File: rca.sh\n+x\n*** Update File: b/c.py\n", []string{"rca.sh", "b/c.py"}},
		{`python3 -c "if a -> b: pass"`, nil},
		{"ls 2>&1", nil},
		{`jq '.a >= 3' f`, nil},
	} {
		if got := WrittenFiles(tt.cmd); !slices.Equal(got, tt.want) {
			t.Errorf("WrittenFiles(%q) = %q, want %q", tt.cmd, got, tt.want)
		}
	}
}
