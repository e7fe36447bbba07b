package score

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/trace"
)

func TestPythonRegexp(t *testing.T) {
	tests := []struct {
		pattern, name string
		match         bool
		bad           string
	}{
		{`cart\b`, "cart", true, ""},
		{`cart\b`, "cart-7d9f", true, ""},
		{`cart\b`, "cartservice", false, ""},
		{`frontend-.*`, "frontend", false, ""},
		{`load-generator-.*`, "load-generator-6b7", true, ""},
		{`^frontend$`, "frontend", true, ""},
		{`^frontend$`, "frontend\n", true, ""}, // Python's $ allows a final newline
		{`^frontend\Z`, "frontend\n", false, ""},
		{`[]a]x`, "]x", true, ""},
		{`[^]a]x`, "bx", true, ""},
		{`(?P<app>ad)-.*`, "ad-1", true, ""},
		{`a\$`, "a$", true, ""},
		{`*.*`, "", false, "missing argument to repetition"},
		{`ad(?=service)`, "", false, "(?=…) is not supported"},
		{`(a)\1`, "", false, "backreference"},
		{`a++`, "", false, "possessive"},
	}
	for _, tt := range tests {
		re, err := PythonRegexp(tt.pattern)
		if tt.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tt.bad) {
				t.Errorf("%q: err %v, want %q", tt.pattern, err, tt.bad)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.pattern, err)
			continue
		}
		if got := re.MatchString(tt.name); got != tt.match {
			t.Errorf("%q on %q = %v, want %v", tt.pattern, tt.name, got, tt.match)
		}
	}
}

func TestParseEntity(t *testing.T) {
	for in, want := range map[string]string{
		"otel-demo/Deployment/checkout":   "otel-demo/Deployment/checkout",
		"otel-demo/deployment/checkout":   "otel-demo/Deployment/checkout",
		"Service/cart":                    "Service/cart",
		"service/flagd":                   "Service/flagd",
		"flagd-config ConfigMap":          "ConfigMap/flagd-config",
		"currency-68d8484df8-c2rsg (Pod)": "Pod/currency-68d8484df8-c2rsg",
		"otel-demo/checkout":              "otel-demo/checkout",
		"checkout":                        "checkout",
		" `cart` ":                        "cart",
		"load-generator":                  "load-generator",
		"a b c":                           "a b c",
	} {
		if got := ParseEntity(in).String(); got != want {
			t.Errorf("ParseEntity(%q) = %q, want %q", in, got, want)
		}
	}
}

// incident mirrors the shape of ITBench incident 1: a root Pod group whose
// aliases include the services it overloads.
func incident(t *testing.T) *GroundTruth {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gt.yaml")
	os.WriteFile(path, []byte(`
groups:
  - {id: lg-pod, kind: Pod, namespace: otel-demo, filter: ["load-generator-.*"], root_cause: true}
  - {id: lg-svc, kind: Service, namespace: otel-demo, filter: ['load-generator\b']}
  - {id: fp-svc, kind: Service, namespace: otel-demo, filter: ['frontend-proxy\b']}
  - {id: flags, kind: ConfigMap, namespace: otel-demo, name: flagd-config}
  - {id: cart, kind: Service, namespace: otel-demo, filter: ['cart\b']}
aliases: [[lg-svc, lg-pod]]
propagations:
  - {source: lg-pod, target: lg-svc}
  - {source: lg-svc, target: fp-svc}
`), 0o644)
	gts, err := Load(path, "1")
	if err != nil {
		t.Fatal(err)
	}
	return gts[0]
}

func TestMatcher(t *testing.T) {
	gt := incident(t)
	tests := []struct {
		entity string
		strict bool
		want   string
	}{
		{"otel-demo/Pod/load-generator-7c9d", false, "lg-pod"},
		{"otel-demo/Deployment/load-generator", false, "lg-svc"}, // lenient kind, an alias of the root
		{"otel-demo/Deployment/load-generator", true, ""},
		{"otel-demo/Service/load-generator", true, "lg-svc"},
		{"kube-system/Service/load-generator", false, ""},
		{"Service/load-generator", false, "lg-svc"},
		{"otel-demo/ConfigMap/flagd-config", false, "flags"},
		{"otel-demo/Deployment/flagd-config", false, ""}, // ConfigMap is not a workload kind
		{"otel-demo/Service/cartservice", false, ""},
	}
	for _, tt := range tests {
		groups := Matcher{StrictKind: tt.strict}.Match(gt, ParseEntity(tt.entity))
		got := ""
		if len(groups) > 0 {
			got = groups[0].ID
		}
		if got != tt.want {
			t.Errorf("Match(%q, strict=%v) = %q, want %q", tt.entity, tt.strict, got, tt.want)
		}
	}
}

func TestScoreEntities(t *testing.T) {
	gt := incident(t)
	preds := []string{
		"kube-system/Deployment/kube-scheduler",
		"otel-demo/Service/frontend-proxy",
		"otel-demo/Deployment/load-generator",
		"otel-demo/Pod/load-generator-7c9d", // same alias class again: a duplicate
		"otel-demo/Service/frontend-proxy",  // same name again
	}
	props := []Propagation{{Source: "otel-demo/Deployment/load-generator", Target: "otel-demo/Service/frontend-proxy"}, {Source: "otel-demo/Service/frontend-proxy", Target: "otel-demo/Deployment/checkout"}}
	s := ScoreEntities(gt, preds, props, Options{})
	if s.RootClasses != 1 || math.Abs(s.Precision-1.0/3) > 1e-9 || s.Recall != 1 {
		t.Errorf("P/R = %v/%v over %d roots", s.Precision, s.Recall, s.RootClasses)
	}
	if !s.Predictions[3].Duplicate || !s.Predictions[4].Duplicate || s.Predictions[2].Group != "lg-svc" || !s.Predictions[2].Root {
		t.Errorf("predictions = %+v", s.Predictions)
	}
	wantK := []PRF{{0, 0, 0}, {0, 0, 0}, {1.0 / 3, 1, 0.5}, {1.0 / 3, 1, 0.5}, {1.0 / 3, 1, 0.5}}
	for k, w := range wantK {
		if math.Abs(s.AtK[k].Precision-w.Precision) > 1e-9 || s.AtK[k].Recall != w.Recall || math.Abs(s.AtK[k].F1-w.F1) > 1e-9 {
			t.Errorf("@%d = %+v, want %+v", k+1, s.AtK[k], w)
		}
	}
	// Paths: ground truth load-generator → frontend-proxy; the agent's
	// load-generator → frontend-proxy → (checkout, matching nothing).
	c := s.Chain
	if strings.Join(c.GroundTruth, ",") != "load-generator,frontend-proxy" || len(c.Model) != 3 || len(c.Common) != 2 {
		t.Fatalf("chain = %+v", c)
	}
	if math.Abs(c.Precision-2.0/3) > 1e-9 || c.Recall != 1 {
		t.Errorf("chain P/R = %v/%v", c.Precision, c.Recall)
	}
	// The namespace filter drops kube-system predictions before scoring.
	s = ScoreEntities(gt, preds, nil, Options{Namespace: "otel-demo"})
	if !s.Predictions[0].Dropped || s.Precision != 0.5 || s.AtK[0].Precision != 0 || s.AtK[1].Recall != 1 {
		t.Errorf("namespace filter: %+v", s)
	}
	if s := ScoreEntities(gt, nil, nil, Options{}); s.Precision != 0 || s.Recall != 0 || s.Chain.Recall != 0 {
		t.Errorf("no predictions: %+v", s)
	}
}

func TestParseDiagnosis(t *testing.T) {
	tests := []struct {
		name, body string
		preds      string
		repaired   string
		err        string
	}{
		{"current schema", `{"entities":[{"name":"ns/Pod/a","contributing_factor":true},{"name":"ns/Pod/b","contributing_factor":false},{"name":"ns/Pod/c"}]}`, "ns/Pod/a,ns/Pod/c", "", ""},
		{"fenced with prose", "Here it is:\n```json\n{\"entities\":[{\"name\":\"x\"}]}\n```\nDone.", "x", "removed a code fence", ""},
		{"prose around", `The answer: {"entities":[{"name":"x"}]} as requested`, "x", "removed text around the object", ""},
		{"trailing commas", `{"entities":[{"name":"x",},],}`, "x", "removed trailing commas", ""},
		{"broken", "{\n  \"entities\": [\n    {\"name\": \"x\"\n  ]\n}", "", "", "invalid JSON at line 4, column 3"},
		{"wrong type", `{"entities":{"name":"x"}}`, "", "", "field \"entities\""},
	}
	for _, tt := range tests {
		d, err := ParseDiagnosis([]byte(tt.body), "f")
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: err %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got := strings.Join(d.Predictions(), ","); got != tt.preds || !strings.Contains(d.Repaired, tt.repaired) {
			t.Errorf("%s: predictions %q repaired %q", tt.name, got, d.Repaired)
		}
	}
	// The older schema names propagation ends by entity id.
	d, err := ParseDiagnosis([]byte(`{"entities":[{"id":"e1","name":"flagd-config ConfigMap","contributing_factor":true}],
		"propagations":[{"source":"e1","target":"cart"},{"source":"e1","target":"x","source_name":"flagd Service","target_name":"cart Service"}]}`), "old")
	if err != nil || d.Propagations[0].Source != "flagd-config ConfigMap" || d.Propagations[0].Target != "cart" || d.Propagations[1].Source != "flagd Service" {
		t.Errorf("old schema: %+v %v", d, err)
	}
}

// run builds a trace from calls, each given as tool, arguments, exit status
// (-1: no result) and output, paired by call id.
func run(id string, calls ...callSpec) *trace.Trace {
	t := &trace.Trace{ID: id}
	for i, c := range calls {
		if c.final != "" {
			t.Append(trace.Step{Kind: trace.KindFinal, Text: c.final})
			continue
		}
		callID := fmt.Sprintf("c%d", i)
		t.Append(trace.Step{Kind: trace.KindToolCall, Tool: c.tool, Args: c.args, CallID: callID})
		if c.exit >= 0 {
			exit := c.exit
			t.Append(trace.Step{Kind: trace.KindToolResult, CallID: callID, ExitCode: &exit, IsError: exit != 0, Text: c.out})
		}
	}
	t.Link()
	return t
}

type callSpec struct {
	tool, args string
	exit       int
	out, final string
}

func TestDiagnosisOf(t *testing.T) {
	const (
		addB     = `{"input":"*** Begin Patch\n*** Add File: agent_output.json\n+{\"entities\":[{\"name\":\"ns/Pod/b\"}]}\n*** End Patch"}`
		heredocD = `{"command":["bash","-lc","cat <<EOF > /w/agent_output.json\n{\"entities\":[{\"name\":\"ns/Pod/d\"}]}\nEOF"]}`
		pyWrite  = `{"command":["/usr/bin/python3","-c","import json\ndata={'entities':[{'name':'ns/Pod/e'}]}\nwith open('agent_output.json','w') as f: json.dump(data, f)"]}`
		jqPrint  = `{"command":["jq",".","agent_output.json"]}`
	)
	attached := &trace.Trace{ID: "attached", Diagnosis: &trace.Diagnosis{Source: "run/agent_output.json", Body: `{"entities":[{"name":"ns/Pod/c"}]}`}}
	tests := []struct {
		t      *trace.Trace
		source string // "" when an error is expected
		pred   string
		err    string
	}{
		{attached, "run/agent_output.json", "ns/Pod/c", ""},
		{run("written", callSpec{tool: "apply_patch", args: addB, out: "Success."},
			callSpec{final: `{"entities":[{"name":"ignored"}]}`}),
			"agent_output.json written by step 0 (apply_patch)", "ns/Pod/b", ""},
		{run("final", callSpec{final: "Root cause:\n```json\n{\"entities\":[{\"name\":\"ns/Pod/a\"}]}\n```"}),
			"step 0 (JSON in the final message)", "ns/Pod/a", ""},
		// A write whose call failed does not count, nor one whose result
		// never came; the script that then wrote the file is read through
		// the copy jq printed.
		{run("failed-then-script",
			callSpec{tool: "shell", args: heredocD, exit: 71, out: "sandbox-exec: execvp() of 'cat <<EOF > /w/agent_output.json' failed"},
			callSpec{tool: "shell", args: pyWrite, exit: 0},
			callSpec{tool: "shell", args: jqPrint, exit: 0, out: `{"entities":[{"name":"ns/Pod/e"}]}`},
			callSpec{tool: "shell", args: heredocD, exit: -1}),
			"agent_output.json printed by step 4 (jq)", "ns/Pod/e", ""},
		{run("script-unprinted", callSpec{tool: "shell", args: pyWrite, exit: 0}), "", "",
			"answer not readable from the trace: step 0 wrote it by script"},
		{run("all-failed", callSpec{tool: "shell", args: heredocD, exit: 1, out: "denied"}), "", "",
			"no answer: no agent_output.json and no diagnosis in the trace: every write of agent_output.json failed (steps 0)"},
		{&trace.Trace{ID: "none"}, "", "", ErrNoAnswer.Error()},
	}
	for _, tt := range tests {
		d, err := DiagnosisOf(tt.t)
		if tt.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("%s: err %v, want %q", tt.t.ID, err, tt.err)
			}
			continue
		}
		if err != nil || d.Source != tt.source || d.Predictions()[0] != tt.pred {
			t.Errorf("%s: %+v %v", tt.t.ID, d, err)
		}
	}
}

func TestScoreTraceLeavesOtherTasksAndUnreadableAnswersUnscored(t *testing.T) {
	set := Set{"2": {ID: "2", Source: "gt.json"}}
	remediation := &trace.Trace{ID: "r", Scenario: "2", Task: "**Task**: Generate Remediation Plan\nThe diagnosis is available in: agent_output.json"}
	unreadable := run("u", callSpec{tool: "shell", args: `{"command":["python3","-c","open('agent_output.json','w').write(x)"]}`, exit: 0})
	unreadable.Scenario = "2"
	for _, tt := range []struct {
		t      *trace.Trace
		status Status
	}{{remediation, NotDiagnosis}, {unreadable, Unreadable}} {
		ts := ScoreTrace(tt.t, set, "", Options{})
		if ts.Status != tt.status || ts.EntityScore != nil || ts.Problem == "" {
			t.Errorf("%s: %+v", tt.t.ID, ts)
		}
		o, ok := ts.Outcome("recall", 1)
		if !ok || o.Success != nil || o.Score != nil || !strings.Contains(o.Detail, string(tt.status)) {
			t.Errorf("%s: outcome %+v %v, want an undecided one that says why", tt.t.ID, o, ok)
		}
	}
	if agg := Summarize([]TraceScore{ScoreTrace(remediation, set, "", Options{})}); agg.Unscored != 1 || agg.UnscoredBy[NotDiagnosis] != 1 || agg.Trials != 0 {
		t.Errorf("summary %+v", agg)
	}
}

func TestSummarizeMeansOfScenarioMeans(t *testing.T) {
	mk := func(scenario string, recall float64, status Status) TraceScore {
		return TraceScore{Scenario: scenario, Status: status, EntityScore: &EntityScore{PRF: PRF{Recall: recall, Precision: recall / 2}}}
	}
	agg := Summarize([]TraceScore{
		mk("2", 1, Scored), mk("2", 0, Scored), mk("2", 0, NoAnswer),
		mk("10", 1, Scored),
		{Scenario: "x", Status: NoGroundTruth},
	})
	if len(agg.Scenarios) != 2 || agg.Scenarios[0].Scenario != "2" || agg.Trials != 4 || agg.NoAnswer != 1 || agg.Unscored != 1 {
		t.Fatalf("aggregate = %+v", agg)
	}
	s2 := agg.Scenarios[0]
	if math.Abs(s2.Metrics["recall"].Mean-1.0/3) > 1e-9 || math.Abs(s2.Metrics["recall"].StdErr-1.0/3) > 1e-9 || math.Abs(s2.PassAt1-1.0/3) > 1e-9 {
		t.Errorf("scenario 2 = %+v", s2)
	}
	// Overall: the mean of 1/3 and 1, not of the four trials.
	if o := agg.Overall["recall"]; math.Abs(o.Mean-2.0/3) > 1e-9 || o.N != 2 || math.Abs(o.StdErr-1.0/3) > 1e-9 {
		t.Errorf("overall = %+v", o)
	}
	if _, ok := agg.Overall["chain_f1"]; ok {
		t.Error("chain_f1 averaged without any chain scores")
	}
}

func TestMetric(t *testing.T) {
	s := &EntityScore{PRF: PRF{0.5, 1, 0.66}, AtK: [MaxK]PRF{{0, 0, 0}, {0.5, 1, 0.66}}}
	for m, want := range map[Metric]float64{"recall": 1, "precision@2": 0.5, "recall@1": 0} {
		if v, ok := m.Value(s); !ok || v != want {
			t.Errorf("%s = %v %v", m, v, ok)
		}
	}
	for _, bad := range []Metric{"recall@0", "recall@6", "accuracy", "chain_f1@2"} {
		if CheckMetric(bad) == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if CheckMetric("chain_f1") != nil {
		t.Error("chain_f1 refused")
	}
}

func TestLoadOutcomeLabels(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	tests := []struct {
		name, body string
		want       string // trace:success:score per label
		problems   []string
	}{
		{"a.csv", "trace_id,success,score\nt1,true,\nt2,fail,0.2\nt3,,0.9\nt4,maybe,\n,true,\nt5,,x\n", "t1:true:-,t2:false:0.2,t3:true:0.9",
			[]string{"a.csv:5: success \"maybe\"", "a.csv:6: no trace_id", "a.csv:7: score \"x\" is not a number"}},
		{"b.json", "[\n {\"trace_id\": \"t1\", \"success\": true},\n {\"id\": \"t2\", \"score\": 0.5},\n {\"trace_id\": \"t3\"}\n]", "t1:true:-,t2:false:0.5",
			[]string{"b.json:4: neither success nor score"}},
		{"c.jsonl", "{\"trace_id\":\"t1\",\"success\":\"pass\"}\nnot json\n", "t1:true:-", []string{"c.jsonl:2:"}},
	}
	for _, tt := range tests {
		labels, problems, err := LoadOutcomeLabels(write(tt.name, tt.body))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var got []string
		for _, l := range labels {
			o := l.Outcome(0.8)
			score := "-"
			if o.Score != nil {
				score = strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", *o.Score), "0"), ".")
			}
			got = append(got, fmt.Sprintf("%s:%v:%s", l.TraceID, *o.Success, score))
		}
		if strings.Join(got, ",") != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, strings.Join(got, ","), tt.want)
		}
		if len(problems) != len(tt.problems) {
			t.Errorf("%s: problems %v", tt.name, problems)
			continue
		}
		for i, p := range problems {
			if !strings.Contains(p.Error(), tt.problems[i]) {
				t.Errorf("%s: problem %q, want %q", tt.name, p, tt.problems[i])
			}
		}
	}
	if _, _, err := LoadOutcomeLabels(write("d.csv", "name,value\n")); err == nil || !strings.Contains(err.Error(), "trace_id") {
		t.Errorf("header without trace_id: %v", err)
	}
}
