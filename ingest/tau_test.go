package ingest

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/shared"
)

// tauResults is a results file of two runs: one that passed, and one that
// crashed before the agent spoke (a crash keeps info.error, not a task).
const tauResults = `[
{"task_id": 3, "reward": 1.0, "trial": 0,
 "info": {"task": {"user_id": "mia_li_3668", "instruction": "You want to fly to Seattle.", "actions": [{"name": "book_reservation", "kwargs": {}}], "outputs": ["327"]},
          "source": "user", "user_cost": 0.9, "reward_info": {"reward": 1.0, "info": {"r_actions": 1.0, "r_outputs": 1.0}, "actions": []}},
 "traj": [
  {"role": "system", "content": "# Airline Agent Policy\n\nBe careful."},
  {"role": "user", "content": "Book me a flight.", "tool_calls": null, "tool_call_id": null},
  {"role": "assistant", "content": "Booking.", "tool_calls": [{"id": "0", "function": {"name": "book_reservation", "arguments": {"user_id": "mia_li_3668"}}}]},
  {"role": "tool", "content": "{\"reservation_id\": \"R1\"}", "tool_calls": null, "tool_call_id": null},
  {"role": "assistant", "content": "Booked: R1, 327 dollars."},
  {"role": "user", "content": "###STOP###"}
 ]},
{"task_id": 4, "reward": 0.0, "trial": 0, "info": {"error": "context window exceeded", "traceback": "Traceback ..."}, "traj": []}
]`

func TestTauBenchSniff(t *testing.T) {
	tests := []struct {
		name, head string
		want       bool
	}{
		{"results", tauResults, true},
		{"one run, traj last and cut", `{"task_id": 34, "reward": 0.0, "info": {"task": {"user_id": "x"}}, "traj": [{"role": "system", "content": "` + strings.Repeat("p", 200), true},
		{"cut before the traj", `{"task_id": 34, "reward": 0.0, "info": {"task": {"instruction": "` + strings.Repeat("p", 200), true},
		{"traj and reward", `{"reward": 1, "traj": []}`, true},
		{"a chat", `[{"role": "user", "content": "hi"}]`, false},
		{"traj alone", `{"traj": []}`, false},
	}
	for _, tt := range tests {
		if got := (TauBench{}).Sniff([]byte(tt.head)); got != tt.want {
			t.Errorf("%s: Sniff = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestTauBenchResults(t *testing.T) {
	traces, issues := decodeWith(t, TauBench{}, "results.json", strings.NewReader(tauResults))
	if len(traces) != 2 || len(issues) != 0 {
		t.Fatalf("traces %d, issues %v", len(traces), issues)
	}
	tr := traces[0]
	want := `0 system role=system type=instructions "# Airline Agent Policy\n\nBe careful."
1 message role=user "Book me a flight."
2 message role=assistant "Booking."
3 tool_call role=assistant tool=book_reservation id=0 args={"user_id":"mia_li_3668"} pair=4 ""
4 tool_result role=tool tool=book_reservation id=0 pair=3 "{\"reservation_id\": \"R1\"}"
5 final role=assistant "Booked: R1, 327 dollars."
6 message role=user "###STOP###"
`
	if got := stepLines(tr); got != want {
		t.Errorf("steps:\n%s\nwant\n%s", got, want)
	}
	if !strings.HasPrefix(tr.ID, "tau:airline:3:0:") || tr.Scenario != "airline:3" || tr.Trial != "0" || tr.Task != "You want to fly to Seattle." || tr.System != "tau-bench" {
		t.Errorf("id %q scenario %q trial %q task %q", tr.ID, tr.Scenario, tr.Trial, tr.Task)
	}
	for k, v := range map[string]string{"domain": "airline", "user_id": "mia_li_3668", "user_cost": "0.9", "expected_actions": "book_reservation", "expected_outputs": `"327"`} {
		if tr.Meta[k] != v {
			t.Errorf("meta %s = %q, want %q", k, tr.Meta[k], v)
		}
	}
	if o := tr.Outcomes; len(o) != 1 || !*o[0].Success || *o[0].Score != 1 || o[0].Metric != "reward" || o[0].Detail != "r_actions=1.0 r_outputs=1.0" {
		t.Errorf("outcome %+v", o)
	}
	crash := traces[1]
	if got := stepLines(crash); got != "0 error role=harness type=error \"context window exceeded\\nTraceback ...\"\n" {
		t.Errorf("crash steps:\n%s", got)
	}
	if o := crash.Outcomes; len(o) != 1 || *o[0].Success || crash.Scenario != "4" {
		t.Errorf("crash outcome %+v, scenario %q", o, crash.Scenario)
	}
}

func TestTauBenchBadRecords(t *testing.T) {
	content := `[
{"task_id": 1, "reward": "lots", "traj": [{"role": "user", "content": "hi"}], "info": {}},
{"task_id": [1], "reward": 1, "traj": [], "info": {}},
{"task_id": 2, "reward": 1, "traj": [], "info": {"task": {"actions": "all"}}},
{"task_id": 3, "reward": 1, "traj": {"role": "user"}, "info": {}}
]`
	traces, issues := decodeWith(t, TauBench{}, "bad.json", strings.NewReader(content))
	want := []string{
		`bad.json:2: record 0 (line 2): reward "lots" is not a number; no outcome`,
		`bad.json:3: record 1 (line 3): task_id and trial should be numbers or text; record skipped`,
		`bad.json:4: record 2 (line 4): field "info.task.actions" should be an array, found a string; record skipped`,
		`bad.json:5: record 3 (line 5): field "traj" should be an array, found an object; messages skipped`,
	}
	if got := issueTexts(issues, Error); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(traces) != 2 || len(traces[0].Outcomes) != 0 || len(traces[1].Steps) != 0 {
		t.Errorf("traces %d", len(traces))
	}
}

// tauSamples are the real runs: AgentRx's two retail failures and the
// airline run of Docent's examples, with their steps and tool calls.
var tauSamples = []struct {
	file         string
	steps, calls int
	scenario     string
}{
	{"agentrx/tau-retail-invalid_invocation.json", 34, 9, "retail:34"},
	{"agentrx/tau-retail-underspecified_intent.json", 36, 8, "retail:71"},
	{"docent/tb_airline.json", 54, 12, "airline:0"},
}

func TestTauBenchSamples(t *testing.T) {
	for _, s := range tauSamples {
		path := shared.Path(t, "samples/"+s.file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := Detect(data[:min(len(data), SniffSize)]); !ok || f.Name() != "taubench" {
			t.Errorf("%s: detected as %v", s.file, f)
		}
		traces, issues := decodeWith(t, TauBench{}, path, bytes.NewReader(data))
		if len(issues) != 0 || len(traces) != 1 {
			t.Errorf("%s: %d traces, issues %v", s.file, len(traces), issues)
			continue
		}
		tr := traces[0]
		paired := 0
		for _, st := range tr.Steps {
			if st.Kind == "tool_call" && st.Pair != nil {
				paired++
			}
		}
		if len(tr.Steps) != s.steps || paired != s.calls || tr.CountKind("tool_call") != s.calls || tr.Scenario != s.scenario {
			t.Errorf("%s: %d steps, %d of %d calls paired, scenario %q; want %d steps, %d calls, %q",
				s.file, len(tr.Steps), paired, tr.CountKind("tool_call"), tr.Scenario, s.steps, s.calls, s.scenario)
		}
		if o := tr.Outcomes; len(o) != 1 || *o[0].Success || tr.Task == "" {
			t.Errorf("%s: outcome %+v, task %q", s.file, o, tr.Task)
		}
		t.Logf("%s: %s, %d steps, %d tool calls", s.file, tr.ID, len(tr.Steps), s.calls)
	}
}

func FuzzTauBench(f *testing.F) {
	f.Add([]byte(tauResults))
	f.Add([]byte(`{"task_id": "7", "reward": NaN, "trial": null, "info": {"error": {"type": "x"}}, "traj": [{"role": "tool"}, {"role": "tool", "tool_call_id": "q"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFormat(t, TauBench{}, data) })
}
