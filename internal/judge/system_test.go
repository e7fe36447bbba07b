package judge

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/judge/judgetest"
	"github.com/faultline/faultline/taxonomy"
	"github.com/faultline/faultline/trace"
)

// Findings for the tests of system failures, on handTrace's seven steps.
var (
	sysEmpty = trace.Finding{Mode: "SYS-1", Source: "detector", Detector: "empty-model-response", Verdict: trace.Present, Steps: []int{2, 3, 4}, Quote: "kubectl"}
	sysTool  = trace.Finding{Mode: "SYS-2", Source: "detector", Detector: "infrastructure-error", Verdict: trace.Present, Steps: []int{5}}
	mastRep  = trace.Finding{Mode: "FM-1.3", Source: "detector", Detector: "repeated-tool-call", Verdict: trace.Present, Steps: []int{4, 5}, Quote: "kubectl"}
)

func withFindings(fs ...trace.Finding) *trace.Trace {
	t := handTrace()
	t.Findings = fs
	return t
}

// silent is a run of seven steps in which the model never answered: the
// request, then the harness re-prompting it.
func silent(fs ...trace.Finding) *trace.Trace {
	t := &trace.Trace{ID: "silent", Format: "codex", Task: "Find the root cause of the incident."}
	t.Append(trace.Step{Kind: trace.KindSystem, Role: trace.RoleHarness, Text: "Instructions: Find the root cause of the incident. Write agent_output.json."})
	t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleUser, Text: "Begin investigation"})
	for range 5 {
		t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleHarness, Type: trace.TypeRetryNudge, Text: "I don't see agent_output.json file."})
	}
	t.Findings = fs
	return t
}

func TestSystemOnly(t *testing.T) {
	mad := sysEmpty
	mad.Source = "mad:annotator_1"
	tests := []struct {
		name     string
		findings []trace.Finding
		want     string // the reason; "" when the trace is to be judged
	}{
		{"one system failure", []trace.Finding{sysEmpty}, "skipped: only system failures (SYS-1 Empty model response at S2-S4); no agent behaviour to judge"},
		{"two codes, steps merged per code", []trace.Finding{sysTool, sysEmpty, {Mode: "SYS-1", Source: "detector", Verdict: trace.Present, Steps: []int{6, 3}}},
			"skipped: only system failures (SYS-1 Empty model response at S2-S4, S6; SYS-2 Tool or harness failure at S5); no agent behaviour to judge"},
		{"a MAST mode beside it", []trace.Finding{sysEmpty, mastRep}, ""},
		{"MAST only", []trace.Finding{mastRep}, ""},
		{"no findings", nil, ""},
		{"another source's system failure", []trace.Finding{mad}, ""},
		{"another source's MAST mode does not count", []trace.Finding{sysEmpty, {Mode: "FM-1.5", Source: "mad:annotator_1", Verdict: trace.Present}}, "skipped: only system failures (SYS-1 Empty model response at S2-S4)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, skip := SystemOnly(silent(tt.findings...), "detector")
			if skip != (tt.want != "") || !strings.HasPrefix(reason, tt.want) {
				t.Errorf("SystemOnly = %q, %v; want %q", reason, skip, tt.want)
			}
		})
	}
	// Where the agent acted before the system failure, the run is judged:
	// the judge can answer that it is a system failure.
	if reason, skip := SystemOnly(withFindings(sysEmpty), "detector"); skip {
		t.Errorf("a run the agent acted in is skipped: %q", reason)
	}
	empty := silent(sysEmpty)
	empty.Append(trace.Step{Kind: trace.KindMessage, Agent: "Tester", Role: trace.RoleAssistant})
	if _, skip := SystemOnly(empty, "detector"); !skip {
		t.Error("an empty agent message counts as behaviour")
	}
}

// A trace whose detector findings are system failures only is recorded as
// skipped, with the reason and no findings, and costs no call; the others
// are judged as before. IncludeSystemFailures judges them all.
func TestRunSkipsSystemFailuresOnly(t *testing.T) {
	traces := map[string]*trace.Trace{
		"sys-only": silent(sysEmpty),
		"sys-two":  silent(sysEmpty, sysTool),
		"mixed":    withFindings(sysEmpty, mastRep),
		"acted":    withFindings(sysEmpty),
		"clean":    withFindings(),
	}
	tests := []struct {
		name    string
		include bool
		skipped []string
	}{
		{"default", false, []string{"sys-only", "sys-two"}},
		{"include system failures", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var list []*trace.Trace
			for id, tr := range traces {
				tr.ID = id
				list = append(list, tr)
			}
			st := newMemStore(list)
			// A judgement stored before must not survive a skip.
			st.findings["sys-only"] = []trace.Finding{{Mode: "FM-1.5", Source: "judge:fake-model", Verdict: trace.Present}}
			srv := judgetest.NewServer(validScript)
			defer srv.Close()
			r := testRunner(t, srv, st, func(o *Options) { o.IncludeSystemFailures = tt.include })
			if err := r.Run(context.Background(), st.ids()); err != nil {
				t.Fatal(err)
			}
			judged := len(traces) - len(tt.skipped)
			p := r.Progress()
			if p.Done != len(traces) || p.SystemOnly != len(tt.skipped) || p.Calls != judged || len(srv.Calls()) != judged || len(r.Skips()) != len(tt.skipped) {
				t.Errorf("progress %+v, %d calls, skips %+v", p, len(srv.Calls()), r.Skips())
			}
			for id := range traces {
				rec, skipped := st.records[id], false
				for _, s := range tt.skipped {
					skipped = skipped || s == id
				}
				if !skipped {
					if rec.Status != StatusOK || len(st.findings[id]) != 14 {
						t.Errorf("%s: record %+v, %d findings", id, rec, len(st.findings[id]))
					}
					continue
				}
				if rec.Status != StatusSkipped || rec.Calls != 0 || rec.PromptVersion != r.Version() || !strings.HasPrefix(rec.Summary, "skipped: only system failures (SYS-1 Empty model response at S2-S4") ||
					!strings.HasSuffix(rec.Summary, "; no agent behaviour to judge") || rec.TaskSuccess != "" || len(rec.Agreement) != 0 {
					t.Errorf("%s: record %+v", id, rec)
				}
				if len(st.findings[id]) != 0 {
					t.Errorf("%s: a skipped trace has findings %+v", id, st.findings[id])
				}
			}
			// The skip is decided again on the next run, at no cost.
			srv.Reset()
			again := testRunner(t, srv, st, func(o *Options) { o.IncludeSystemFailures = tt.include })
			if err := again.Run(context.Background(), st.ids()); err != nil {
				t.Fatal(err)
			}
			if p := again.Progress(); p.Skipped != judged || p.SystemOnly != len(tt.skipped) || len(srv.Calls()) != 0 {
				t.Errorf("second run: %+v, %d calls", p, len(srv.Calls()))
			}
		})
	}
}

// A dry run counts what a run would skip, and what its prompts would have cost.
func TestSelectionCountsSkips(t *testing.T) {
	tok, err := NewTokenizer("")
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Samples: 2, Budget: DefaultBudget, Render: DefaultRender, HintSource: "detector"}
	one, err := NewPreview(withFindings(), tok, opt)
	if err != nil {
		t.Fatal(err)
	}
	sel := NewSelection(tok, opt)
	quiet, err := NewPreview(silent(sysEmpty), tok, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range []*trace.Trace{silent(sysEmpty), withFindings(sysEmpty, mastRep), withFindings()} {
		sel.Add(tr)
	}
	// Findings change hints, not the token count much: compare loosely.
	if sel.Judged != 2 || len(sel.Skips) != 1 || sel.First == nil || sel.SkipTokens < quiet.Total()*2*9/10 || sel.SkipTokens > quiet.Total()*2*11/10 {
		t.Errorf("selection %+v (one trace: %d tokens, a silent one %d)", sel, one.Total(), quiet.Total())
	}
	var b strings.Builder
	if err := sel.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"=== selection (3 traces;", "2 would be judged: about ", "1 skipped as system failures only: about ", "(--include-system-failures judges them)", "  silent: skipped: only system failures (SYS-1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("dry run lacks %q:\n%s", want, b.String())
		}
	}
}

// A system failure verdict is checked like a mode's; beside it, the MAST
// verdicts are neither checked nor kept, only named when marked present.
func TestValidateSystemFailure(t *testing.T) {
	tr := handTrace()
	v := newView(render(tr, DefaultRender, "detector"), nil, seq(0, len(tr.Steps)), 0, 1)
	good := judgetest.Mode{Confidence: 0.8, Steps: []string{"S6"}, Quote: "The root cause is the flagd-config", Explanation: "The model never answered."}
	sys := func(code string, m judgetest.Mode, present map[string]judgetest.Mode) string {
		return judgetest.SystemFailureAnswer(judgetest.SystemFailure{Code: code, Mode: m}, present)
	}
	bogus := map[string]judgetest.Mode{"FM-1.5": {Present: true, Confidence: 0.5, Steps: []string{"S99"}, Quote: "nowhere to be found", Explanation: "x"}, "FM-9.9": {}}
	tests := []struct {
		name     string
		content  string
		code     string   // the accepted system failure; "" for none
		dropped  []string // modes named as dropped
		problems []string // none means accepted
	}{
		{"system failure", sys("SYS-1", good, nil), "SYS-1", nil, nil},
		{"MAST verdicts beside it are dropped unchecked", sys("SYS-2", good, bogus), "SYS-2", []string{"FM-1.5"}, nil},
		{"code in lower case", sys("sys-3", good, nil), "SYS-3", nil, nil},
		{"code given as the name", sys("Context overflow", good, nil), "SYS-4", nil, nil},
		{"no system failure", judgetest.Answer(nil), "", nil, nil},
		{"verdict left out", strings.Replace(judgetest.Answer(nil), `"system_failure":{`, `"unused":{`, 1), "", nil, nil},
		{"verdict false", strings.Replace(judgetest.Answer(nil), `"system_failure":{`, `"system_failure":false,"unused":{`, 1), "", nil, nil},
		{"unknown code", sys("SYS-9", good, nil), "", nil, []string{`system_failure: "code" must be one of SYS-1, SYS-2, SYS-3, SYS-4, not "SYS-9"`}},
		{"quote not there", sys("SYS-1", judgetest.Mode{Confidence: 0.8, Steps: []string{"S2"}, Quote: "the endpoint returned nothing", Explanation: "x"}, nil), "", nil,
			[]string{`system_failure: the quote "the endpoint returned nothing" does not occur in S2`}},
		{"step does not exist", sys("SYS-1", judgetest.Mode{Confidence: 0.8, Steps: []string{"S40"}, Quote: "the endpoint returned nothing", Explanation: "x"}, nil), "", nil,
			[]string{"system_failure: step S40 does not exist (the trace has S0-S6)"}},
		{"no steps", sys("SYS-1", judgetest.Mode{Confidence: 0.8, Steps: []string{}, Quote: "The root cause is", Explanation: "x"}, nil), "", nil, []string{"system_failure is marked present but cites no step"}},
		{"no explanation", sys("SYS-1", judgetest.Mode{Confidence: 0.8, Steps: []string{"S6"}, Quote: "The root cause is"}, nil), "", nil, []string{"system_failure is marked present but has no explanation"}},
		{"bad evidence: MAST verdicts still unchecked", sys("SYS-1", judgetest.Mode{Confidence: 0.8, Steps: []string{"S6"}, Quote: "not in the step at all", Explanation: "x"}, bogus), "", nil,
			[]string{"system_failure: the quote"}},
		{"present unreadable: the modes are checked", strings.Replace(judgetest.Answer(bogus), `"system_failure":{"code":"","present":false`, `"system_failure":{"code":"","present":"maybe"`, 1), "", nil,
			[]string{`system_failure: "present" must be true or false, not "maybe"`, "FM-1.5: step S99 does not exist", `"FM-9.9" is not a mode`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := parseAnswer(tt.content)
			if err != nil {
				t.Fatal(err)
			}
			a, problems := validate(raw, tr, v)
			if len(tt.problems) > 0 {
				all := strings.Join(problems, "\n")
				for _, w := range tt.problems {
					if !strings.Contains(all, w) {
						t.Errorf("problems lack %q:\n%s", w, all)
					}
				}
				if a != nil || (strings.Contains(tt.name, "unchecked") && strings.Contains(all, "FM-")) {
					t.Errorf("answer %+v, problems:\n%s", a, all)
				}
				return
			}
			if len(problems) > 0 {
				t.Fatalf("problems: %v", problems)
			}
			switch {
			case tt.code == "" && (a.System != nil || len(a.Modes) != 14):
				t.Errorf("system %+v, %d modes", a.System, len(a.Modes))
			case tt.code != "" && (a.System == nil || a.System.Code != tt.code || len(a.System.Steps) != 1 || a.System.Quote == "" || len(a.Modes) != 0):
				t.Errorf("system %+v, modes %v", a.System, a.Modes)
			case strings.Join(a.Dropped, ",") != strings.Join(tt.dropped, ","):
				t.Errorf("dropped %v, want %v", a.Dropped, tt.dropped)
			}
		})
	}
	if _, err := parseAnswer(strings.Replace(judgetest.Answer(nil), `"system_failure":{`, `"system_failure":"none","unused":{`, 1)); err == nil || !strings.Contains(err.Error(), `"system_failure" must be an object`) {
		t.Errorf("a system_failure that is not an object: %v", err)
	}
}

// sysReply answers that the run is a system failure, citing the first
// quotable step of the prompt, and marks FM-1.5 present beside it.
func sysReply(c judgetest.Call) judgetest.Reply {
	step, quote := judgetest.Evidence(c.User())
	found := judgetest.Mode{Present: true, Confidence: 0.9, Steps: []string{step}, Quote: quote, Explanation: "The model's turns came back empty."}
	return judgetest.Reply{Content: judgetest.SystemFailureAnswer(judgetest.SystemFailure{Code: "SYS-1", Mode: found}, map[string]judgetest.Mode{"FM-1.5": found})}
}

// A system failure answered by the judge is stored as a finding of its SYS
// code from the judge's source, with no MAST verdict, and the record names
// what was dropped. One with bad evidence gets the corrective retry, then
// is a recorded failure: never a silent "no failure".
func TestRunSystemFailureAnswer(t *testing.T) {
	badQuote := func(c judgetest.Call) judgetest.Reply {
		step, _ := judgetest.Evidence(c.User())
		m := judgetest.Mode{Confidence: 0.9, Steps: []string{step}, Quote: "the model endpoint timed out", Explanation: "x"}
		return judgetest.Reply{Content: judgetest.SystemFailureAnswer(judgetest.SystemFailure{Code: "SYS-2", Mode: m}, nil)}
	}
	tests := []struct {
		name          string
		first, second func(judgetest.Call) judgetest.Reply
		calls         int
		status        string
		err           string // in the record's error
	}{
		{"accepted", sysReply, nil, 1, StatusOK, ""},
		{"bad quote, then corrected", badQuote, sysReply, 2, StatusOK, ""},
		{"bad quote twice", badQuote, badQuote, 2, StatusFailed, `answer rejected after a corrective retry: system_failure: the quote "the model endpoint timed out" does not occur in`},
		{"bad quote, then MAST verdicts", badQuote, validScript, 2, StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := loadTraces(t, examples)[0]
			st := newMemStore([]*trace.Trace{tr})
			srv := judgetest.NewServer(func(c judgetest.Call) judgetest.Reply {
				if len(c.Messages) > 2 {
					if !strings.Contains(c.Last().Content, "when no quote supports a mode or a system failure, mark it absent") {
						t.Errorf("corrective message:\n%s", c.Last().Content)
					}
					return tt.second(c)
				}
				return tt.first(c)
			})
			defer srv.Close()
			r := testRunner(t, srv, st, nil)
			if err := r.Run(context.Background(), st.ids()); err != nil {
				t.Fatal(err)
			}
			rec, fs := st.records[tr.ID], st.findings[tr.ID]
			if len(srv.Calls()) != tt.calls || rec.Status != tt.status || !strings.Contains(rec.Error, tt.err) {
				t.Fatalf("%d calls, record %+v", len(srv.Calls()), rec)
			}
			switch {
			case tt.status == StatusFailed:
				if len(fs) != 0 || len(r.Failures()) != 1 {
					t.Errorf("a failed judgement stored %+v", fs)
				}
			case tt.second != nil && strings.Contains(tt.name, "MAST"):
				if len(fs) != 14 {
					t.Errorf("%d findings, want the 14 MAST verdicts", len(fs))
				}
			default:
				if len(fs) != 1 {
					t.Fatalf("findings %+v, want the system failure alone", fs)
				}
				f := fs[0]
				if f.Mode != "SYS-1" || f.Source != "judge:fake-model" || f.Taxonomy != "faultline-system-v1" || f.Verdict != trace.Present || len(f.Steps) != 1 || f.Confidence != 0.9 {
					t.Errorf("finding %+v", f)
				}
				if err := f.CheckEvidence(tr); err != nil {
					t.Error(err)
				}
				if !strings.HasSuffix(rec.Summary, "[System failure (SYS-1) answered: no MAST verdict is kept. Dropped beside it: FM-1.5, marked present.]") || rec.Agreement["SYS-1"] != 1 {
					t.Errorf("record %+v", rec)
				}
			}
		})
	}
}

// Samples vote between a system failure and the agent's behaviour before
// the modes are voted, by the samples that judged the behaviour.
func TestVoteSystemFailure(t *testing.T) {
	sys := &Answer{System: &SystemAnswer{Code: "SYS-1", ModeAnswer: ModeAnswer{Present: true, Steps: []int{5}, Quote: "q", Explanation: "Empty turns."}}, Dropped: []string{"FM-1.5"}, Modes: map[string]ModeAnswer{}}
	early := &Answer{System: &SystemAnswer{Code: "SYS-3", ModeAnswer: ModeAnswer{Present: true, Steps: []int{2}, Quote: "q", Explanation: "Rate limited."}}, Modes: map[string]ModeAnswer{}}
	behaviour := &Answer{Modes: map[string]ModeAnswer{"FM-1.3": {Present: true, Steps: []int{4}, Quote: "q", Explanation: "Twice."}}}
	tests := []struct {
		name    string
		samples []*Answer
		sys     trace.Verdict // "" for no system failure finding
		code    string
		mast    int    // MAST findings
		fm13    string // FM-1.3's explanation suffix
		note    string
	}{
		{"one sample", []*Answer{sys}, trace.Present, "SYS-1", 0, "", "[System failure (SYS-1) answered: no MAST verdict is kept. Dropped beside it: FM-1.5, marked present.]"},
		{"majority, earliest evidence", []*Answer{sys, early, behaviour}, trace.Present, "SYS-3", 0, "",
			"[System failure (SYS-1, SYS-3) answered: no MAST verdict is kept. Dropped beside it: FM-1.3, FM-1.5, marked present.]"},
		{"tie", []*Answer{sys, behaviour}, trace.Unsure, "SYS-1", 14, "Twice.", "[1 of 2 samples answered a system failure (SYS-1); the MAST verdicts are the other 1 samples'.]"},
		{"minority", []*Answer{sys, behaviour, behaviour}, "", "SYS-1", 14, "(2 of 2 samples found it)", "[1 of 3 samples answered a system failure (SYS-1); the MAST verdicts are the other 2 samples'.]"},
		{"none", []*Answer{behaviour}, "", "", 14, "Twice.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			findings, agreement := verdicts(tt.samples, "judge:m")
			var sysF *trace.Finding
			mast := 0
			for i, f := range findings {
				if strings.HasPrefix(f.Mode, "SYS-") {
					sysF = &findings[i]
					continue
				}
				mast++
				if f.Mode == "FM-1.3" && (f.Verdict != trace.Present || !strings.HasSuffix(f.Explanation, tt.fm13)) {
					t.Errorf("FM-1.3 %+v", f)
				}
			}
			switch {
			case tt.sys == "" && sysF != nil, tt.sys != "" && (sysF == nil || sysF.Verdict != tt.sys || sysF.Mode != tt.code || sysF.Taxonomy != "faultline-system-v1"):
				t.Errorf("system finding %+v, want %s %s", sysF, tt.sys, tt.code)
			case mast != tt.mast:
				t.Errorf("%d MAST findings, want %d", mast, tt.mast)
			case tt.code != "" && agreement[tt.code] == 0:
				t.Errorf("agreement %v", agreement)
			}
			if got := systemNote(tt.samples); got != tt.note {
				t.Errorf("note %q\nwant %q", got, tt.note)
			}
		})
	}
}

// A system failure in one window makes the trace one; the modes found in
// the other windows are named as dropped.
func TestMergeWindowsSystemFailure(t *testing.T) {
	behaviour := &Answer{Modes: map[string]ModeAnswer{"FM-1.3": {Present: true, Steps: []int{3}}}, Summary: "first"}
	sys := &Answer{System: &SystemAnswer{Code: "SYS-1", ModeAnswer: ModeAnswer{Present: true, Steps: []int{40}}}, Dropped: []string{"FM-1.5"}, Summary: "last", TaskSuccess: "failure"}
	merged := mergeWindows([]*Answer{behaviour, sys})
	if merged.System != sys.System || len(merged.Modes) != 0 || strings.Join(merged.Dropped, ",") != "FM-1.3,FM-1.5" || merged.Summary != "last" {
		t.Errorf("merged %+v", merged)
	}
}

// The prompt offers the system failure outlet, keeps the agent's own tool
// errors the agent's, and draws FM-1.3 and FM-1.5 narrowly.
func TestSystemPromptDefinitions(t *testing.T) {
	p := SystemPrompt()
	for _, want := range []string{
		"First decide whether the run failed because of the harness or the infrastructure rather than the agent",
		"SYSTEM FAILURES (THE HARNESS OR THE INFRASTRUCTURE, NOT THE AGENT)",
		"SYS-1 Empty model response: ", "SYS-2 Tool or harness failure: ", "SYS-3 Rate limit or quota: ", "SYS-4 Context overflow: ",
		"Errors the agent caused with its own tool arguments",
		"are the agent's: judge them with the failure modes, not as a system failure",
		"When \"system_failure\" is present, no failure mode is kept for the run",
		"FM-1.3 Step repetition (", promptDefinitions["FM-1.3"],
		"FM-1.5 Unaware of termination conditions (", promptDefinitions["FM-1.5"],
		"FM-3.1 Premature termination (", promptDefinitions["FM-3.1"],
		"It is not FM-1.3: a closing message that sums up results found earlier; querying again after something changed",
		"checking a metric a second time to confirm it",
		"It is not FM-1.5: a conversation that goes on because another agent still has work to do",
		"a harness that prompts again because the model's turn came back empty (that is a system failure)",
		"an agent that stops before the objective is met (that is FM-3.1, the opposite)",
		"A run that asserts success without evidence is FM-3.3, not FM-3.2.",
		`{"system_failure": {"present": false, "code": "", `,
	} {
		if !strings.Contains(p, want) {
			t.Errorf("the prompt lacks %q", want)
		}
	}
	// The taxonomy's wording that counts a harness's re-prompts as FM-1.5,
	// or an aborted turn as FM-3.1, must not reach the judge.
	for _, m := range []string{"FM-1.5", "FM-3.1"} {
		mode, _ := taxonomy.MAST.Mode(m)
		if strings.Contains(p, mode.Definition) {
			t.Errorf("the prompt still gives the taxonomy's definition of %s", m)
		}
	}
	var schema struct {
		Required   []string `json:"required"`
		Properties struct {
			System struct {
				Required   []string `json:"required"`
				Properties struct {
					Code struct {
						Enum []string `json:"enum"`
					} `json:"code"`
				} `json:"properties"`
			} `json:"system_failure"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(answerSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(schema.Required, "system_failure") || strings.Join(schema.Properties.System.Properties.Code.Enum, ",") != ",SYS-1,SYS-2,SYS-3,SYS-4" || len(schema.Properties.System.Required) != 6 {
		t.Errorf("schema %s", answerSchema)
	}
	if v := PromptVersion(DefaultRender); !strings.HasPrefix(v, "p2-") {
		t.Errorf("prompt version %s", v)
	}
}
