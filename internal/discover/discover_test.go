package discover

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/analyze"
	"github.com/faultline/faultline/internal/store/memory"
	"github.com/faultline/faultline/trace"
)

// cohort makes runs of an SRE agent: failed runs whose jq check fails on
// their answer file (at other lines and columns each time), failed runs
// whose kubectl calls time out against the cluster (at other addresses),
// successful runs (a few of which also hit the jq error and recovered),
// and runs with no decided outcome, which show the jq error too.
func cohort() []*trace.Trace {
	yes, no := true, false
	var out []*trace.Trace
	run := func(id, model string, success *bool, cmd, errText string, finding bool) {
		t := &trace.Trace{ID: id, Model: model, Format: "codex", DetectedWith: "r1"}
		if success != nil {
			t.Outcomes = []trace.Outcome{{Source: "itbench", Success: success}}
		}
		t.Append(trace.Step{Kind: trace.KindMessage, Role: trace.RoleUser, Text: "find the root cause"})
		t.Append(trace.Step{Kind: trace.KindToolCall, Tool: "shell", Args: `{"command":["bash","-lc","kubectl get pods -n otel-demo"]}`, CallID: "1"})
		t.Append(trace.Step{Kind: trace.KindToolResult, Tool: "shell", CallID: "1", ExitCode: intp(0), Text: "NAME READY"})
		if errText != "" {
			t.Append(trace.Step{Kind: trace.KindToolCall, Tool: "shell", Args: `{"command":["bash","-lc","` + cmd + `"]}`, CallID: "2"})
			t.Append(trace.Step{Kind: trace.KindToolResult, Tool: "shell", CallID: "2", ExitCode: intp(5), Text: errText + "\nmore output"})
		}
		if finding {
			t.Findings = []trace.Finding{{Source: "detector", Mode: "FM-3.3", Verdict: trace.Present, Steps: []int{len(t.Steps) - 1}}}
		}
		t.Append(trace.Step{Kind: trace.KindFinal, Role: trace.RoleAssistant, Text: "done"})
		out = append(out, t)
	}
	for i := range 8 {
		run(fmt.Sprintf("jq-%d", i), []string{"gpt-oss-120b", "openai/gpt-oss-120b", "mistral"}[i%3], &no, "jq . agent_output.json",
			fmt.Sprintf("jq: parse error: Invalid literal at line %d, column %d", i+2, 17*i+3), i%2 == 0)
	}
	for i := range 4 {
		run(fmt.Sprintf("k8s-%d", i), "mistral", &no, "kubectl logs deploy/checkout", fmt.Sprintf("Unable to connect to the server: dial tcp 10.0.%d.7:443: i/o timeout", i), false)
	}
	for i := range 20 {
		errText := ""
		if i < 2 {
			errText = fmt.Sprintf("jq: parse error: Invalid literal at line %d, column 9", i+1)
		}
		run(fmt.Sprintf("ok-%02d", i), "gemini-3-flash-preview", &yes, "jq . agent_output.json", errText, false)
	}
	for i := range 3 {
		run(fmt.Sprintf("undecided-%d", i), "mistral", nil, "jq . agent_output.json", "jq: parse error: Invalid literal at line 1, column 1", false)
	}
	return out
}

func TestDiscover(t *testing.T) {
	st := memory.New(cohort()...)
	var progress []string
	res, err := Discover(context.Background(), st, Options{Kinds: []Kind{KindError}, MinFailed: 2,
		Progress: func(done, total int) { progress = append(progress, fmt.Sprint(done, "/", total)) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Traces != 35 || res.Failed != 12 || res.Succeeded != 20 || res.Undecided != 3 {
		t.Errorf("traces %d, failed %d, succeeded %d, undecided %d", res.Traces, res.Failed, res.Succeeded, res.Undecided)
	}
	if fmt.Sprint(progress) != "[32/32]" {
		t.Errorf("progress %v", progress)
	}
	if len(res.Patterns) != 2 || res.Tested != 2 {
		t.Fatalf("%d patterns (%d tested): %+v", len(res.Patterns), res.Tested, res.Patterns)
	}
	jq, k8s := res.Patterns[0], res.Patterns[1]
	if jq.Template != "jq: parse error: Invalid literal at line <num>, column <num>" || jq.Key != "shell" || jq.Kind != KindError {
		t.Errorf("first pattern %s %s %q", jq.Kind, jq.Key, jq.Template)
	}
	if jq.Failed != (analyze.Proportion{K: 8, N: 12}) || jq.Succeeded != (analyze.Proportion{K: 2, N: 20}) {
		t.Errorf("jq: failed %v, succeeded %v", jq.Failed, jq.Succeeded)
	}
	// 8/12 against 2/20: a lift of (8/12)/(2/20) - 1.
	if jq.Lift == nil || *jq.Lift != 5.6667 || jq.NeverInSuccesses {
		t.Errorf("jq lift %v", *jq.Lift)
	}
	if jq.Test.P <= 0 || jq.Test.P >= 0.01 || jq.Test.Q < jq.Test.P || jq.Class != analyze.Fatal {
		t.Errorf("jq test %+v, class %s", jq.Test, jq.Class)
	}
	if k8s.Failed.K != 4 || k8s.Succeeded.K != 0 || !k8s.NeverInSuccesses || k8s.Lift != nil ||
		k8s.Template != "Unable to connect to the server: dial tcp <ip>: i/o timeout" {
		t.Errorf("k8s pattern %+v", k8s)
	}
	if got := fmt.Sprint(jq.Models); got != "[{gpt-oss-120b 6 0} {mistral 2 0} {gemini-3-flash-preview 0 2}]" {
		t.Errorf("jq by model %s", got)
	}
	if len(jq.Quotes) != 3 || jq.Quotes[0] != (Quote{Trace: "jq-0", Step: 4, Text: "jq: parse error: Invalid literal at line 2, column 3"}) {
		t.Errorf("jq quotes %+v", jq.Quotes)
	}
	var traces []string
	for _, r := range jq.Traces {
		traces = append(traces, fmt.Sprintf("%s@%d:%v", r.ID, r.Step, r.Failed))
	}
	if got := strings.Join(traces, " "); got != "jq-0@4:true jq-1@4:true jq-2@4:true jq-3@4:true jq-4@4:true jq-5@4:true jq-6@4:true jq-7@4:true ok-00@4:false ok-01@4:false" {
		t.Errorf("jq traces %s", got)
	}
	if jq.ID != PatternID(jq.Signature()) || len(jq.ID) != 10 || jq.ID == k8s.ID {
		t.Errorf("ids %s %s", jq.ID, k8s.ID)
	}

	// The same again gives the same answer, IDs included.
	again, err := Discover(context.Background(), st, Options{Kinds: []Kind{KindError}, MinFailed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if again.Patterns[0].ID != jq.ID || again.Patterns[1].ID != k8s.ID {
		t.Errorf("IDs changed: %s %s", again.Patterns[0].ID, again.Patterns[1].ID)
	}

	// Fewer than 5 failures would be too few to call; a higher floor
	// leaves the kubectl pattern out.
	res, err = Discover(context.Background(), st, Options{Kinds: []Kind{KindError}, MinFailed: 5, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Patterns) != 1 || res.Tested != 1 || res.Patterns[0].ID != jq.ID {
		t.Errorf("min-failed 5: %d patterns, %d tested", len(res.Patterns), res.Tested)
	}
}

func TestDiscoverKinds(t *testing.T) {
	st := memory.New(cohort()...)
	res, err := Discover(context.Background(), st, Options{MinFailed: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res.Patterns {
		got = append(got, fmt.Sprintf("%s %s %s %d/%d", p.Kind, p.Key, p.Template, p.Failed.K, p.Succeeded.K))
	}
	want := []string{
		// Every decided run ends with its answer.
		"endings  … ⇒ ends with a final answer 12/20",
		"errors shell jq: parse error: Invalid literal at line <num>, column <num> 8/2",
		"errors shell Unable to connect to the server: dial tcp <ip>: i/o timeout 4/0",
		"findings FM-3.3 tool_result: jq: parse error: Invalid literal at line <num>, column <num> 4/0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("patterns:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The runs that end with the jq call are the runs with the jq error:
	// one pattern, which is the error, the ending listed with it.
	if also := fmt.Sprint(res.Patterns[1].Also); also != "[endings shell:kubectl get → shell:jq ⇒ ends with a final answer]" {
		t.Errorf("folded into the jq error: %s", also)
	}
	if _, err := Discover(context.Background(), st, Options{Kinds: []Kind{"nope"}}); err == nil {
		t.Error("an unknown kind is accepted")
	}
}

func TestCluster(t *testing.T) {
	mk := func(kind Kind, key, template string, failed int) *signatureStats {
		s := &signatureStats{sig: Signature{Kind: kind, Key: key, Template: template}, failed: failed}
		s.name = s.sig.String()
		s.tokens = Tokens(template)
		slices.Sort(s.tokens)
		for i := range failed + 1 {
			s.traces = append(s.traces, int32(i))
			s.steps = append(s.steps, 1)
		}
		return s
	}
	sigs := []*signatureStats{
		mk(KindError, "shell", "sandbox-exec: execvp() of 'python3 --version' failed: No such file or directory", 1),
		mk(KindError, "shell", "sandbox-exec: execvp() of '<text>' failed: No such file or directory", 5),
		mk(KindError, "apply_patch", "sandbox-exec: execvp() of '<text>' failed: No such file or directory", 2),
		mk(KindError, "shell", "ModuleNotFoundError: No module named 'pandas'", 3),
		mk(KindError, "shell", "only seen in successes", 0),
	}
	groups := cluster(sigs, ClusterOptions{Similarity: 0.75, MaxLeaders: 10})
	got := groupNames(groups)
	want := []string{
		"errors shell: sandbox-exec: execvp() of '<text>' failed: No such file or directory + errors shell: sandbox-exec: execvp() of 'python3 --version' failed: No such file or directory",
		"errors shell: ModuleNotFoundError: No module named 'pandas'",
		"errors apply_patch: sandbox-exec: execvp() of '<text>' failed: No such file or directory",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("groups:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// With no leader, none can join another: each stays its own.
	if groups := cluster(sigs, ClusterOptions{Similarity: 0.75, MaxLeaders: 0}); len(groups) != 4 || len(groups[0]) != 1 {
		t.Errorf("one leader: %d groups", len(groups))
	}
	if j := jaccard([]string{"a", "b", "c"}, []string{"b", "c", "d"}); j != 0.5 {
		t.Errorf("jaccard %v", j)
	}
}

// groupNames names each group by its signatures' names, joined by " + ".
func groupNames(groups [][]*signatureStats) []string {
	var out []string
	for _, g := range groups {
		var names []string
		for _, s := range g {
			names = append(names, s.name)
		}
		out = append(out, strings.Join(names, " + "))
	}
	return out
}

// The groups do not depend on the order signatures come in.
func TestClusterOrder(t *testing.T) {
	var sigs []*signatureStats
	for i := range 40 {
		template := fmt.Sprintf("error %d in module %c: connection refused by peer", i%7, 'a'+i%5)
		s := &signatureStats{sig: Signature{Kind: KindError, Key: "shell", Template: template}, failed: i % 4}
		s.name = fmt.Sprint(s.sig.String(), i)
		s.tokens = signatureTokens(s.sig)
		sigs = append(sigs, s)
	}
	show := func(groups [][]*signatureStats) string { return strings.Join(groupNames(groups), "\n") }
	want := show(cluster(slices.Clone(sigs), ClusterOptions{Similarity: 0.75, MaxLeaders: 3}))
	slices.Reverse(sigs)
	for range 3 {
		if got := show(cluster(slices.Clone(sigs), ClusterOptions{Similarity: 0.75, MaxLeaders: 3})); got != want {
			t.Fatalf("another order, other groups:\n%s\nwant:\n%s", got, want)
		}
		sigs = append(sigs[7:], sigs[:7]...)
	}
}
