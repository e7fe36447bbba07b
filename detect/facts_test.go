package detect

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

func TestParseTask(t *testing.T) {
	tests := []struct {
		name, task, instructions string
		want                     taskSpec
	}{
		{
			name: "ITBench Zero's prompt",
			task: "You MUST NOT read or use ground_truth.yaml under any circumstances.\n" +
				"**IMPORTANT: Your incident data is located in these directories (READ-ONLY):**\n" +
				"- /Users/x/ITBench-Lite/snapshots/sre/v0.2-B96D/Scenario-2\n\n" +
				"Your working directory (for writing output, code, etc.) is: /Users/x/agent_outputs/2/1\n" +
				"**Write your diagnosis to: /Users/x/agent_outputs/2/1/agent_output.json**\n" +
				"**You must validate json using `jq`in shell after writing the file.**\n" +
				"- Limit the explanation fields (`reasoning`, `explanation`, `evidence`) to no more than 2 sentences each.\n" +
				"- NEVER read ground_truth.yaml",
			want: taskSpec{
				Output: "agent_output.json", Validator: "jq",
				Forbidden:     []prohibition{{Name: "ground_truth.yaml"}},
				DataDirs:      []string{"/Users/x/ITBench-Lite/snapshots/sre/v0.2-B96D/Scenario-2"},
				DataFromTask:  true,
				WorkDir:       "/Users/x/agent_outputs/2/1",
				SentenceLimit: 2, LimitedFields: []string{"reasoning", "explanation", "evidence"},
			},
		},
		{
			name: "the example cohort's wrapped prompt",
			task: "a read-only snapshot of its alerts, Kubernetes events and object specs, logs, traces and metrics:\n\n" +
				"    /data/itbench-lite/snapshots/101\n\n" +
				"- You MUST NOT read ground_truth.yaml, or any other answer key, under any circumstances.\n" +
				"- Your working directory is /home/zero/runs/sim-gamma/101/1. Write nothing anywhere else.\n" +
				"Write your diagnosis to agent_output.json in the working directory, then check that the file\n" +
				"parses with jq; if it does not, fix it and check again.",
			want: taskSpec{
				Output: "agent_output.json", Validator: "jq",
				Forbidden: []prohibition{{Name: "ground_truth.yaml"}},
				DataDirs:  []string{"/data/itbench-lite/snapshots/101"}, DataFromTask: true,
				WorkDir: "/home/zero/runs/sim-gamma/101/1",
			},
		},
		{
			name:         "a run's own request overrides standing instructions",
			task:         "**Write your remediation plan to: agent_remediation.json**\nValidate the JSON using `jq` after writing.",
			instructions: "Your incident data is located in these directories (READ-ONLY):\n- /data/s\nWrite your diagnosis to: agent_output.json\nYou MUST NOT read ground_truth.yaml.",
			want: taskSpec{
				Output: "agent_remediation.json", Validator: "jq",
				Forbidden: []prohibition{{Name: "ground_truth.yaml"}},
				DataDirs:  []string{"/data/s"},
			},
		},
		{name: "a task without requirements", task: "What is 2+2? Check your arithmetic."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseTask(tt.task, tt.instructions)
			var forbidden []string
			for _, f := range got.Forbidden {
				forbidden = append(forbidden, f.Name)
				if !strings.Contains(tt.task+tt.instructions, f.Phrase) {
					t.Errorf("phrase %q is not in the prompt", f.Phrase)
				}
			}
			var wantForbidden []string
			for _, f := range tt.want.Forbidden {
				wantForbidden = append(wantForbidden, f.Name)
			}
			if got.Output != tt.want.Output || got.Validator != tt.want.Validator || got.WorkDir != tt.want.WorkDir ||
				got.DataFromTask != tt.want.DataFromTask || got.SentenceLimit != tt.want.SentenceLimit ||
				!slices.Equal(got.DataDirs, tt.want.DataDirs) || !slices.Equal(forbidden, wantForbidden) ||
				!slices.Equal(got.LimitedFields, tt.want.LimitedFields) {
				t.Errorf("got %+v\nwant %+v", *got, tt.want)
			}
			for _, phrase := range []string{got.OutputPhrase, got.ValidatorPhrase, got.LimitPhrase} {
				if !strings.Contains(tt.task+"\n"+tt.instructions, phrase) {
					t.Errorf("phrase %q is not in the prompt", phrase)
				}
			}
		})
	}
}

func TestCommandOf(t *testing.T) {
	for _, tt := range []struct{ args, want string }{
		{`{"command":["bash","-lc","ls -R /data"],"workdir":"/"}`, "ls -R /data"},
		{`{"command":["ls","-F","/data"]}`, "ls -F /data"},
		{`{"command":"cat f"}`, "cat f"},
		{`{"cmd":"cat f"}`, "cat f"},
		{`{"input":"*** Begin Patch"}`, "*** Begin Patch"},
		{`{"code":"print(1)"}`, "print(1)"},
		{`{"logs_file":"/data/l.tsv"}`, `{"logs_file":"/data/l.tsv"}`},
		{`not json`, `not json`},
	} {
		f := newFacts(build(`call shell ` + tt.args + ` => x`))
		if got := f.command(0); got != tt.want {
			t.Errorf("command of %s = %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestRequestKeys(t *testing.T) {
	f := newFacts(build(
		`call shell {"command":["bash","-lc","cat  f"]} => x`,
		`call shell {"command":"cat f","timeout_ms":100} => x`,
		`call q {"b":{"x": 1},"a":"v"} => x`,
		`call q {"a":"v", "b":{"x":1}} => x`,
		`call q {"a":"v","b":{"x":2}} => x`,
		`call other {"a":"v","b":{"x":1}} => x`,
	))
	key := func(i int) uint64 { return f.callKey(2 * i) }
	near := func(i int) uint64 { return f.nearKey(2 * i) }
	if key(0) != key(1) || key(2) != key(3) {
		t.Error("equivalent requests have different keys")
	}
	if key(3) == key(4) || key(3) == key(5) || key(0) == key(2) {
		t.Error("different requests share a key")
	}
	if near(3) != near(4) || near(3) == near(5) {
		t.Error("near keys should ignore numbers, and only numbers")
	}
}

func TestAbsolutePaths(t *testing.T) {
	got := absolutePaths(`{"file":"/data/snap/7/logs.tsv","workdir":"/"} see https://example.com/x and (/tmp/a.json), cd /home/u/ then ls /`)
	want := []string{"/data/snap/7/logs.tsv", "/tmp/a.json", "/home/u"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestSentences(t *testing.T) {
	text := "The flag changed at 14:02:11. I'll read logs.tsv next!\nThen v1.2 is checked"
	want := []string{"The flag changed at 14:02:11.", "I'll read logs.tsv next!", "Then v1.2 is checked"}
	if got := sentences(text); !slices.Equal(got, want) {
		t.Errorf("sentences = %q, want %q", got, want)
	}
	if got := sentenceAt(text, strings.Index(text, "logs.tsv")); got != want[1] {
		t.Errorf("sentenceAt = %q, want %q", got, want[1])
	}
}

func TestAgentSteps(t *testing.T) {
	for _, tt := range []struct {
		step         trace.Step
		agent, asked bool
	}{
		{trace.Step{Kind: trace.KindMessage, Role: trace.RoleAssistant}, true, false},
		{trace.Step{Kind: trace.KindToolCall, Role: trace.RoleAssistant}, true, false},
		{trace.Step{Kind: trace.KindReasoning}, true, false},
		{trace.Step{Kind: trace.KindMessage, Role: trace.RoleUser}, false, true},
		{trace.Step{Kind: trace.KindMessage, Role: trace.RoleHarness, Type: trace.TypeRetryNudge}, false, true},
		{trace.Step{Kind: trace.KindMessage, Role: trace.RoleUser, Agent: "Chief Executive Officer"}, true, false},
		{trace.Step{Kind: trace.KindMessage, Agent: "Planner"}, true, false},
		{trace.Step{Kind: trace.KindMessage, Role: "developer"}, false, false},
		{trace.Step{Kind: trace.KindToolResult, Role: trace.RoleTool}, false, false},
		{trace.Step{Kind: trace.KindSystem, Role: trace.RoleHarness}, false, false},
	} {
		if trace.ByAgent(&tt.step) != tt.agent || isPrompt(&tt.step) != tt.asked {
			t.Errorf("%+v: agent %v prompt %v, want %v %v", tt.step, trace.ByAgent(&tt.step), isPrompt(&tt.step), tt.agent, tt.asked)
		}
	}
}

func TestAnswerFacts(t *testing.T) {
	tr := build(zeroTask, `user go`, readAlerts,
		`fail shell {"command":["bash","-lc","echo '{}' > agent_output.json"]} => denied`,
		writeAnswer, validate,
		`call update_plan {"plan":[{"step":"Write agent_output.json","status":"completed"}]} => ok`)
	a := newFacts(tr).answerFile()
	if a.File != "agent_output.json" || !slices.Equal(a.Writes, []int{3, 5}) || !slices.Equal(a.Validations, []int{7}) ||
		!a.Exists || !a.ContentKnown || a.ContentStep != 7 || strings.TrimSpace(a.Content) != goodAnswer {
		t.Errorf("got %+v", *a)
	}
	if newFacts(build(`task Say hi.`)).answerFile() != nil {
		t.Error("a task without an output file has answer facts")
	}
}

// FuzzWriteCompact checks that a JSON value streamed through writeCompact
// hashes as its json.Compact copy does.
func FuzzWriteCompact(f *testing.F) {
	for _, seed := range []string{
		`"kubectl get pods"`,
		`{ "a" : [1, 2 ,3],
		  "b":"x  y\t" }`,
		`[ "say \"hi\" ", { "k" : "\\" } , null ]`,
		`"\\" `,
		" 12 ",
		`{"nested": {"s": " a \u0020 b ", "n": [ ]}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if !json.Valid([]byte(v)) {
			return
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(v)); err != nil {
			t.Fatal(err)
		}
		var want, got keyWriter
		for _, k := range []*keyWriter{&want, &got} {
			k.exact.SetSeed(outputSeed)
			k.near.SetSeed(outputSeed)
		}
		want.write(compact.String())
		got.writeCompact(v)
		if want.exact.Sum64() != got.exact.Sum64() || want.near.Sum64() != got.near.Sum64() {
			t.Errorf("writeCompact(%q) hashes unlike its compact copy %q", v, compact.String())
		}
	})
}

// FuzzAbsolutePaths checks absolutePaths against its definition read
// byte by byte.
func FuzzAbsolutePaths(f *testing.F) {
	for _, seed := range []string{
		`{"file":"/data/snap/7/logs.tsv","workdir":"/"} see https://example.com/x and (/tmp/a.json)`,
		"cd /home/u/ then ls /",
		"/a/b,/c;x=/d `/e` ü/f \"/g\"",
		"/",
		"//x",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var want []string
		for i := 0; i < len(text); i++ {
			if text[i] != '/' || (i > 0 && !strings.ContainsRune(" \t\n\r'\"=([,", rune(text[i-1]))) ||
				i+1 == len(text) || !isPathStart(text[i+1]) {
				continue
			}
			j := i + 1
			for j < len(text) && !strings.ContainsRune(" \t\n\r'\"\\,;|&)<>*", rune(text[j])) {
				j++
			}
			if p := strings.TrimRight(text[i:j], ".:/`"); p != "" {
				want = append(want, p)
			}
			i = j
		}
		if got := absolutePaths(text); !slices.Equal(got, want) {
			t.Errorf("absolutePaths(%q) = %q, want %q", text, got, want)
		}
	})
}
