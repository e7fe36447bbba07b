package ingest

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"github.com/faultline/faultline/trace"
)

// wantStep is the part of a step a splitter test checks.
type wantStep struct {
	kind  trace.Kind
	role  string
	agent string
	tool  string
	text  string // the step's text (or arguments, for tool calls)
}

func checkSteps(t *testing.T, got []trace.Step, want []wantStep) {
	t.Helper()
	if len(got) != len(want) {
		for i, s := range got {
			t.Logf("step %d: %s role=%q agent=%q tool=%q text=%q args=%q", i, s.Kind, s.Role, s.Agent, s.Tool, s.Text, s.Args)
		}
		t.Fatalf("got %d steps, want %d", len(got), len(want))
	}
	for i, w := range want {
		s := got[i]
		text := s.Text
		if s.Kind == trace.KindToolCall {
			text = s.Args
		}
		if s.Kind != w.kind || s.Role != w.role || s.Agent != w.agent || s.Tool != w.tool || text != w.text {
			t.Errorf("step %d = {%s %q %q %q %q}, want {%s %q %q %q %q}", i, s.Kind, s.Role, s.Agent, s.Tool, text, w.kind, w.role, w.agent, w.tool, w.text)
		}
	}
}

// madLogFor returns a fresh splitter for a framework name as splitting
// records it, for text in that framework's log.
func madLogFor(framework, text string) madLog {
	switch framework {
	case "hyperagent":
		return &hyperAgentLog{}
	case "chatdev":
		return &chatDevLog{}
	case "metagpt":
		if strings.Contains(text, "NEW MESSAGES:") {
			return &metaGPTLog{}
		}
		return &loguruLog{} // the JSON run records log through loguru
	case "openmanus", "loguru":
		return &loguruLog{}
	case "magentic-one":
		return &magenticLog{}
	case "appworld":
		return &appWorldLog{}
	}
	return nil
}

func stripSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// checkPreserved verifies that the steps hold all of text but the marker
// lines and whitespace: every line the splitter does not take as a marker,
// and the part of each marker line it keeps, in order.
func checkPreserved(t *testing.T, text string, log madLog, steps []trace.Step) {
	t.Helper()
	var want, got strings.Builder
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if m, ok := log.mark(line); ok {
			want.WriteString(stripSpace(m.text))
			continue
		}
		want.WriteString(stripSpace(line))
	}
	for _, s := range steps {
		got.WriteString(stripSpace(s.Text))
		got.WriteString(stripSpace(s.Args))
	}
	if got.String() != want.String() {
		g, w := got.String(), want.String()
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		t.Errorf("text lost or changed at byte %d of %d: got …%.80q…, want …%.80q…", i, len(w), g[i:], w[i:])
	}
}

func TestSplitHyperAgent(t *testing.T) {
	doc := `{"instance_id": "x__y-1", "problem_statement": ["Fix the bug\r", "in y"], "note": {"text": ["looped"]},
	 "trajectory": [
	 "HyperAgent_x__y-1 - INFO - Initialized HyperAgent instance x__y-1",
	 "HyperAgent_x__y-1 - INFO - Planner's Response: Thought: look first",
	 "",
	 "Intern Name: Codebase Navigator",
	 "Subgoal: find y",
	 "HyperAgent_x__y-1 - INFO - Inner-Navigator-Assistant's Response: Thought: search",
	 "Action:",
	 "    code_search()",
	 "  HyperAgent_x__y-1 - INFO - Navigator->Planner: y is in y.py",
	 "HyperAgent_x__y-1 - ERROR - tool crashed"]}`
	raw, _ := json.Marshal(doc)
	s := splitMADTrajectory(raw, "HyperAgent")
	if s.framework != "hyperagent" || s.task != "Fix the bug\nin y" || s.instanceID != "x__y-1" || s.note != "looped" {
		t.Errorf("framework/task/instance/note = %q/%q/%q/%q", s.framework, s.task, s.instanceID, s.note)
	}
	checkSteps(t, s.steps, []wantStep{
		{trace.KindSystem, trace.RoleHarness, "", "", "Initialized HyperAgent instance x__y-1"},
		{trace.KindMessage, trace.RoleAssistant, "Planner", "", "Thought: look first"},
		{trace.KindMessage, trace.RoleAssistant, "Planner", "", "Intern Name: Codebase Navigator\nSubgoal: find y"},
		{trace.KindMessage, trace.RoleAssistant, "Inner-Navigator-Assistant", "", "Thought: search\nAction:\n    code_search()"},
		{trace.KindMessage, trace.RoleAssistant, "Navigator", "", "y is in y.py"},
		{trace.KindSystem, trace.RoleHarness, "", "", "tool crashed"},
	})
	if !s.steps[5].IsError {
		t.Error("an ERROR record should mark its step as an error")
	}
}

func TestSplitChatDev(t *testing.T) {
	log := `[2025-17-01 11:36:43 INFO] **[Preprocessing]**

**task_prompt**: Build a calculator.

[2025-17-01 11:36:43 INFO] flask app.py did not start for online log
[2025-17-01 11:36:43 INFO] System: **[RolePlaying]**

| Parameter | Value |
| **assistant_role_name** | Chief Product Officer |
| **user_role_name** | Chief Executive Officer |

[2025-17-01 11:36:43 INFO] flask app.py did not start for online log
[2025-17-01 11:36:43 INFO] Chief Executive Officer: **[Start Chat]**

Decide the modality.
[2025-17-01 11:36:45 INFO] HTTP Request: POST https://api/v1 "HTTP/1.1 200 OK"
[2025-17-01 11:36:46 INFO] Chief Product Officer: **Chief Product Officer<->Chief Executive Officer on : DemandAnalysis, turn 0**

<INFO> Application
[2025-17-01 11:36:46 INFO] Counselor: hello
[2025-17-01 11:36:46 INFO] **[Seminar Conclusion]**:

 <INFO> Application
`
	s := splitMADText(log, []string{"ChatDev"})
	if s.framework != "chatdev" || s.task != "Build a calculator." {
		t.Errorf("framework/task = %q/%q", s.framework, s.task)
	}
	checkSteps(t, s.steps, []wantStep{
		{trace.KindSystem, trace.RoleHarness, "", "", "**task_prompt**: Build a calculator."},
		{trace.KindSystem, trace.RoleHarness, "", "", "| Parameter | Value |\n| **assistant_role_name** | Chief Product Officer |\n| **user_role_name** | Chief Executive Officer |"},
		{trace.KindMessage, trace.RoleUser, "Chief Executive Officer", "", "**[Start Chat]**\n\nDecide the modality."},
		{trace.KindSystem, trace.RoleHarness, "", "", `HTTP Request: POST https://api/v1 "HTTP/1.1 200 OK"`},
		{trace.KindMessage, trace.RoleAssistant, "Chief Product Officer", "", "**Chief Product Officer<->Chief Executive Officer on : DemandAnalysis, turn 0**\n\n<INFO> Application"},
		{trace.KindMessage, "", "Counselor", "", "hello"},
		{trace.KindSystem, trace.RoleHarness, "", "", "<INFO> Application"},
	})
	if s.steps[0].Type != "Preprocessing" || s.steps[1].Type != "RolePlaying" || s.steps[6].Type != "Seminar Conclusion" {
		t.Errorf("types = %q, %q, %q", s.steps[0].Type, s.steps[1].Type, s.steps[6].Type)
	}
	checkPreserved(t, log, &chatDevLog{}, s.steps)
}

func TestSplitMetaGPTRun(t *testing.T) {
	doc := `{"run_id": 4, "prompt": "write fib", "content": "2025-01-17 11:26:53.893 | INFO     | metagpt.roles.role:_act:391 - Alice(SimpleCoder): to do SimpleWriteCode(SimpleWriteCode)\n` +
		"```python\\ndef fib(): pass\\n```\\n" +
		`2025-01-17 11:27:02.806 | INFO     | metagpt.roles.role:_act:391 - Charlie(SimpleReviewer): to do SimpleWriteReview(SimpleWriteReview)\n"}`
	raw, _ := json.Marshal(doc)
	s := splitMADTrajectory(raw, "MetaGPT", "ProgramDev")
	if s.framework != "metagpt" || s.task != "write fib" {
		t.Errorf("framework/task = %q/%q", s.framework, s.task)
	}
	checkSteps(t, s.steps, []wantStep{
		{trace.KindMessage, "SimpleCoder", "Alice", "", "to do SimpleWriteCode(SimpleWriteCode)\n```python\ndef fib(): pass\n```"},
		{trace.KindMessage, "SimpleReviewer", "Charlie", "", "to do SimpleWriteReview(SimpleWriteReview)"},
	})
}

func TestSplitMetaGPTCommunicationLog(t *testing.T) {
	log := `=== MetaGPT Agent Communication Log - Started ===

[2025-03-27 01:21:03] FROM: Human TO: {'<all>'}
ACTION: metagpt.actions.add_requirement.UserRequirement
CONTENT:
What is 2+2?
--------------------------------------------------------------------------------

[2025-03-27 01:21:11] NEW MESSAGES:

SimpleCoder: 
def add(): return 4
--------------------------------------------------------------------------------
SimpleTester: assert add() == 4
--------------------------------------------------------------------------------

=== Communication Log Ended ===
`
	s := splitMADText(log, []string{"MetaGPT"})
	if s.framework != "metagpt" || s.task != "What is 2+2?" {
		t.Errorf("framework/task = %q/%q", s.framework, s.task)
	}
	checkSteps(t, s.steps, []wantStep{
		{trace.KindSystem, trace.RoleHarness, "", "", "MetaGPT Agent Communication Log - Started"},
		{trace.KindMessage, trace.RoleUser, "", "", "ACTION: metagpt.actions.add_requirement.UserRequirement\nCONTENT:\nWhat is 2+2?"},
		{trace.KindMessage, "", "SimpleCoder", "", "def add(): return 4"},
		{trace.KindMessage, "", "SimpleTester", "", "assert add() == 4"},
		{trace.KindSystem, trace.RoleHarness, "", "", "Communication Log Ended"},
	})
	checkPreserved(t, log, &metaGPTLog{}, s.steps)
}

func TestSplitOpenManus(t *testing.T) {
	log := `INFO     [root] telemetry enabled
2025-03-31 20:33:34.368 | INFO     | app.agent.base:run:140 - Executing step 1/20
2025-03-31 20:33:34.369 | INFO     | app.agent.toolcall:think:81 - ✨ Manus's thoughts: I will search.
Then compute.
2025-03-31 20:33:34.369 | INFO     | app.agent.toolcall:think:86 - 🧰 Tools being prepared: ['browser_use']
2025-03-31 20:33:34.370 | INFO     | app.agent.toolcall:think:89 - 🔧 Tool arguments: {"action":"web_search",
"query":"pace"}
2025-03-31 20:33:47.818 | INFO     | app.agent.toolcall:act:150 - 🎯 Tool 'browser_use' completed its mission! Result: Observed output:
21 km/h
2025-03-31 20:33:48.000 | ERROR    | app.llm:ask:1 - rate limited
`
	s := splitMADText(log, []string{"GAIA", "OpenManus"})
	if s.framework != "openmanus" || s.task != "" {
		t.Errorf("framework/task = %q/%q", s.framework, s.task)
	}
	checkSteps(t, s.steps, []wantStep{
		{trace.KindSystem, trace.RoleHarness, "", "", "INFO     [root] telemetry enabled"},
		{trace.KindSystem, trace.RoleHarness, "", "", "Executing step 1/20"},
		{trace.KindMessage, trace.RoleAssistant, "Manus", "", "I will search.\nThen compute."},
		{trace.KindSystem, trace.RoleHarness, "", "", "🧰 Tools being prepared: ['browser_use']"},
		{trace.KindToolCall, trace.RoleAssistant, "Manus", "browser_use", "{\"action\":\"web_search\",\n\"query\":\"pace\"}"},
		{trace.KindToolResult, trace.RoleTool, "", "browser_use", "Observed output:\n21 km/h"},
		{trace.KindSystem, trace.RoleHarness, "", "", "rate limited"},
	})
	if !s.steps[6].IsError {
		t.Error("an ERROR record should mark its step as an error")
	}
	checkPreserved(t, log, &loguruLog{}, s.steps)
}

func TestSplitMagenticOne(t *testing.T) {
	log := `Installing build dependencies: started
SCENARIO.PY STARTING !#!#
---------- user ----------
How many at bats?
---------- MagenticOneOrchestrator ----------
Please search.
---------- TextMessage (WebSurfer) ----------
I typed 'at bats'.
---------- MagenticOneOrchestrator ----------
FINAL ANSWER: 525
SCENARIO.PY COMPLETE !#!#
`
	s := splitMADText(log, []string{"GAIA", "Magentic"})
	if s.framework != "magentic-one" || s.task != "How many at bats?" {
		t.Errorf("framework/task = %q/%q", s.framework, s.task)
	}
	checkSteps(t, s.steps, []wantStep{
		{trace.KindSystem, trace.RoleHarness, "", "", "Installing build dependencies: started"},
		{trace.KindSystem, trace.RoleHarness, "", "", "SCENARIO.PY STARTING !#!#"},
		{trace.KindMessage, trace.RoleUser, "", "", "How many at bats?"},
		{trace.KindMessage, trace.RoleAssistant, "MagenticOneOrchestrator", "", "Please search."},
		{trace.KindMessage, trace.RoleAssistant, "WebSurfer", "", "I typed 'at bats'."},
		{trace.KindFinal, trace.RoleAssistant, "MagenticOneOrchestrator", "", "FINAL ANSWER: 525"},
		{trace.KindSystem, trace.RoleHarness, "", "", "SCENARIO.PY COMPLETE !#!#"},
	})
	checkPreserved(t, log, &magenticLog{}, s.steps)
}

func TestSplitAppWorld(t *testing.T) {
	log := `

******************** Task 5/16 (692c77d_1)  ********************
Rate my songs.
Response from Supervisor Agent
    # ask spotify
    send_message(app_name='spotify', message='Get my playlists')

Code Execution Output

    reply = self.send_message(app_name='spotify')

Entering Spotify Agent message loop
    Message to Spotify Agent
        Get my playlists
    Response from Spotify Agent
        print(apis.spotify.show_playlists())
    Reply from Spotify Agent to Supervisor
        Here they are.
Exiting Spotify Agent message loop
Response from send_message API
    Here they are.
Evaluation
{"success": false}
`
	s := splitMADText(log, []string{"AppWorld"})
	if s.framework != "appworld" || s.task != "Rate my songs." {
		t.Errorf("framework/task = %q/%q", s.framework, s.task)
	}
	checkSteps(t, s.steps, []wantStep{
		{trace.KindMessage, trace.RoleUser, "", "", "Rate my songs."},
		{trace.KindMessage, trace.RoleAssistant, "Supervisor", "", "# ask spotify\nsend_message(app_name='spotify', message='Get my playlists')"},
		{trace.KindToolResult, trace.RoleTool, "", "", "reply = self.send_message(app_name='spotify')"},
		{trace.KindSystem, trace.RoleHarness, "", "", "Entering Spotify Agent message loop"},
		{trace.KindMessage, trace.RoleUser, "", "", "Get my playlists"},
		{trace.KindMessage, trace.RoleAssistant, "Spotify", "", "print(apis.spotify.show_playlists())"},
		{trace.KindMessage, trace.RoleAssistant, "Spotify", "", "Here they are."},
		{trace.KindSystem, trace.RoleHarness, "", "", "Exiting Spotify Agent message loop"},
		{trace.KindToolResult, trace.RoleTool, "", "send_message", "Here they are."},
		{trace.KindSystem, trace.RoleHarness, "", "", `{"success": false}`},
	})
	checkPreserved(t, log, &appWorldLog{}, s.steps)
}

func TestSplitAG2Chat(t *testing.T) {
	doc := `{"problem_statement": ["Add 2 and 2."], "trajectory": [
		{"content": ["Let's use Python.", "", "Go."], "role": "assistant", "name": "mathproxyagent"},
		{"content": "It is 4.", "role": "user", "name": "assistant"},
		{"content": [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}], "role": "user", "name": "Coder"},
		{"content": null, "role": "user", "name": "Tester"},
		{"content": "no speaker named", "role": "system"},
		"a bare string",
		null]}`
	raw, _ := json.Marshal(doc)
	s := splitMADTrajectory(raw, "AG2")
	if s.framework != "ag2" || s.task != "Add 2 and 2." {
		t.Errorf("framework/task = %q/%q", s.framework, s.task)
	}
	checkSteps(t, s.steps, []wantStep{
		{trace.KindMessage, "", "mathproxyagent", "", "Let's use Python.\n\nGo."},
		{trace.KindMessage, "", "assistant", "", "It is 4."},
		{trace.KindMessage, "", "Coder", "", "part one\npart two"},
		{trace.KindMessage, "", "Tester", "", ""},
		{trace.KindMessage, "system", "", "", "no speaker named"},
		{trace.KindMessage, "", "", "", "a bare string"},
	})
}

func TestSplitHintsAndFallback(t *testing.T) {
	// A ChatDev log named by neither field is still recognised by its markers.
	chatdev := "[2025-17-01 11:36:43 INFO] Programmer: code\n[2025-17-01 11:36:44 INFO] Code Reviewer: ok\n"
	if s := splitMADText(chatdev, []string{"Unknown", "Bench"}); s.framework != "chatdev" || len(s.steps) != 2 {
		t.Errorf("unhinted: framework %q, %d steps", s.framework, len(s.steps))
	}
	// A hint wins even when another splitter would find more markers.
	mixed := "---------- A ----------\nx\n---------- B ----------\ny\n[2025-17-01 11:36:43 INFO] Programmer: z\n"
	if s := splitMADText(mixed, []string{"ChatDev"}); s.framework != "chatdev" {
		t.Errorf("hinted: framework %q", s.framework)
	}
	if s := splitMADText(mixed, nil); s.framework != "magentic-one" {
		t.Errorf("most markers: framework %q", s.framework)
	}
	// No markers: one message step, the text tidied but whole.
	s := splitMADText("\n  just some\n  text  \n\n", []string{"ChatDev"})
	if s.framework != "" || len(s.steps) != 1 || s.steps[0].Text != "just some\ntext" || s.steps[0].Kind != trace.KindMessage {
		t.Errorf("fallback: %+v", s)
	}
	if s := splitMADText(" \n ", nil); len(s.steps) != 0 {
		t.Errorf("blank trajectory gave %d steps", len(s.steps))
	}
	// JSON-looking text that is not JSON is split as text.
	if s := splitMADTrajectory(json.RawMessage(`"{not json"`)); len(s.steps) != 1 || s.steps[0].Text != "{not json" {
		t.Errorf("broken JSON document: %+v", s)
	}
	// A document of an unknown shape keeps its text.
	if s := splitMADTrajectory(json.RawMessage(`{"trajectory": 5, "x": "y"}`)); len(s.steps) != 1 || !strings.Contains(s.steps[0].Text, `"x": "y"`) {
		t.Errorf("unknown document: %+v", s)
	}
}

func TestTidyLines(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{"", "    a", "      b", "", "    c  ", " "}, "a\n  b\n\nc"},
		{[]string{"x", "    y"}, "x\n    y"},
		{[]string{"\ta", "\tb"}, "\ta\n\tb"},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := tidyLines(tt.in); got != tt.want {
			t.Errorf("tidyLines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
