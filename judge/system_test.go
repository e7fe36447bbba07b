package judge

import (
	"context"
	"strings"
	"testing"

	"github.com/faultline/faultline/judge/judgetest"
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
			reason, skip := SystemOnly(withFindings(tt.findings...), "detector")
			if skip != (tt.want != "") || !strings.HasPrefix(reason, tt.want) {
				t.Errorf("SystemOnly = %q, %v; want %q", reason, skip, tt.want)
			}
		})
	}
}

// A trace whose detector findings are system failures only is recorded as
// skipped, with the reason and no findings, and costs no call; the others
// are judged as before. IncludeSystemFailures judges them all.
func TestRunSkipsSystemFailuresOnly(t *testing.T) {
	traces := map[string]*trace.Trace{
		"sys-only": withFindings(sysEmpty),
		"sys-two":  withFindings(sysEmpty, sysTool),
		"mixed":    withFindings(sysEmpty, mastRep),
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
	for _, fs := range [][]trace.Finding{{sysEmpty}, {sysEmpty, mastRep}, nil} {
		tr := withFindings(fs...)
		sel.Add(tr)
	}
	// Findings change hints, not the token count much: compare loosely.
	if sel.Judged != 2 || len(sel.Skips) != 1 || sel.First == nil || sel.SkipTokens < one.Total()*2*9/10 || sel.SkipTokens > one.Total()*2*11/10 {
		t.Errorf("selection %+v (one trace: %d tokens)", sel, one.Total())
	}
	var b strings.Builder
	if err := sel.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"=== selection (3 traces;", "2 would be judged: about ", "1 skipped as system failures only: about ", "(--include-system-failures judges them)", "  hand: skipped: only system failures (SYS-1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("dry run lacks %q:\n%s", want, b.String())
		}
	}
}
