package ingest

import (
	"os"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/shared"
)

// docentRuns holds an agent run as Docent's SDK dumps it (one transcript,
// Inspect-shaped messages, scores in the metadata) and a run of the older
// shape, its transcripts an object keyed by agent.
const docentRuns = `[
{"id": "run-1", "name": "airline task 3", "description": null,
 "transcripts": [{"id": "tx-1", "name": null, "messages": [
   {"role": "system", "content": "Airline policy."},
   {"role": "user", "content": "Cancel my trip."},
   {"role": "assistant", "content": [{"type": "reasoning", "reasoning": "Find it first."}, {"type": "text", "text": "Looking it up."}],
    "tool_calls": [{"id": "c1", "function": "get_reservation", "arguments": {"id": "R1"}, "type": "function", "view": null}]},
   {"role": "tool", "tool_call_id": "c1", "function": "get_reservation", "content": "{\"status\": \"booked\"}"},
   {"role": "assistant", "content": "Cancelled.", "model": "claude"}],
  "metadata": {}}],
 "metadata": {"model": "claude-3-7", "sample_id": 3, "epoch_id": 1, "scores": {"reward": 1.0, "correct": true}, "scaffold": "react", "tags": ["x"]}},
{"id": "run-2",
 "transcripts": {"debater_a": {"messages": [{"role": "user", "content": "Argue for A."}, {"role": "assistant", "content": "A is right."}]},
                 "debater_b": {"messages": [{"role": "user", "content": "Argue for B."}, {"role": "assistant", "content": "B is right."}]}},
 "metadata": {"scores": {"judge": "A wins", "winner_correct": false}}}
]`

func TestDocentSniff(t *testing.T) {
	tests := []struct {
		name, head string
		want       bool
	}{
		{"runs", docentRuns, true},
		{"one run", `{"id": "r", "transcripts": [{"messages": [{"role": "user", "content": "x"}]}], "metadata": {}}`, true},
		{"transcripts of no messages", `{"transcripts": [{"text": "x"}]}`, false},
		{"a chat", `{"messages": [{"role": "user", "content": "x"}]}`, false},
	}
	for _, tt := range tests {
		if got := (Docent{}).Sniff([]byte(tt.head)); got != tt.want {
			t.Errorf("%s: Sniff = %v, want %v", tt.name, got, tt.want)
		}
	}
	// Docent's own tau-bench example is tau-bench's record, read as such.
	data, err := os.ReadFile(shared.Path(t, "samples/docent/tb_airline.json"))
	if err != nil {
		t.Fatal(err)
	}
	if (Docent{}).Sniff(data[:min(len(data), SniffSize)]) {
		t.Error("the tau-bench record sniffs as a Docent run")
	}
}

func TestDocentRuns(t *testing.T) {
	traces, issues := decodeWith(t, Docent{}, "runs.json", strings.NewReader(docentRuns))
	if len(traces) != 2 || len(issues) != 0 {
		t.Fatalf("traces %d, issues %v", len(traces), issues)
	}
	tr := traces[0]
	want := `0 system role=system type=instructions "Airline policy."
1 message role=user "Cancel my trip."
2 reasoning role=assistant "Find it first."
3 message role=assistant "Looking it up."
4 tool_call role=assistant tool=get_reservation id=c1 args={"id":"R1"} pair=5 ""
5 tool_result role=tool tool=get_reservation id=c1 pair=4 "{\"status\": \"booked\"}"
6 final role=assistant "Cancelled."
`
	if got := stepLines(tr); got != want {
		t.Errorf("steps:\n%s\nwant\n%s", got, want)
	}
	if tr.ID != "docent:run-1" || tr.Model != "claude-3-7" || tr.Scenario != "3" || tr.Trial != "1" || tr.Task != "Cancel my trip." || tr.Meta["scaffold"] != "react" || tr.Meta["name"] != "airline task 3" {
		t.Errorf("id %q model %q scenario %q trial %q task %q meta %v", tr.ID, tr.Model, tr.Scenario, tr.Trial, tr.Task, tr.Meta)
	}
	if o := tr.Outcomes; len(o) != 1 || o[0].Metric != "reward" || !*o[0].Success || o[0].Detail != "reward=1.0 correct=true" {
		t.Errorf("outcome %+v", o)
	}
	// Several transcripts: each step names its transcript; the first
	// score that reads as one decides.
	debate := traces[1]
	want = `0 message role=user "Argue for A."
1 message role=assistant agent=debater_a "A is right."
2 message role=user "Argue for B."
3 final role=assistant agent=debater_b "B is right."
`
	if got := stepLines(debate); got != want {
		t.Errorf("steps:\n%s\nwant\n%s", got, want)
	}
	if o := debate.Outcomes; len(o) != 1 || o[0].Metric != "winner_correct" || *o[0].Success {
		t.Errorf("outcome %+v", o)
	}
}

func TestDocentBadRuns(t *testing.T) {
	content := `[
{"id": "a", "transcripts": "none"},
{"id": "b", "transcripts": [{"messages": []}, {"messages": 3}, 4], "metadata": {"scores": ["x"]}},
{"id": "c", "transcripts": [], "metadata": {"scores": {"judge": "meh"}}}
]`
	traces, issues := decodeWith(t, Docent{}, "bad.json", strings.NewReader(content))
	want := []string{
		`bad.json:2: record 0 (line 2): field "transcripts" should be an array, found a string; record skipped`,
		`bad.json:3: record 1 (line 3): field "scores" should be an object, found an array; no outcome`,
		`bad.json:3: record 1 (line 3): field "messages" should be an array, found a number; messages skipped`,
		`bad.json:3: record 1 (line 3): transcript 2: a record should be an object, found a number; transcript skipped`,
	}
	if got := issueTexts(issues, Error); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := issueTexts(issues, Notice); len(n) != 1 || !strings.Contains(n[0], `record 2 (line 4): no score reads as an outcome (judge="meh")`) {
		t.Errorf("notices %q", n)
	}
	if len(traces) != 2 {
		t.Errorf("traces %d", len(traces))
	}
}

func FuzzDocent(f *testing.F) {
	f.Add([]byte(docentRuns))
	f.Add([]byte(`{"transcripts": {"a": {"messages": [{"role": "tool"}]}, "b": null}, "metadata": {"scores": {"x": NaN, "y": "C"}, "epoch": [1]}}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFormat(t, Docent{}, data) })
}
