package ingest

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/shared"
	"github.com/faultline/faultline/trace"
)

const inspectHeaderJSON = `{"version": 2, "status": "success",
 "eval": {"eval_id": "E1", "run_id": "R1", "task": "ctf", "model": "openai/gpt-4o", "dataset": {"name": "ctf"},
          "scorers": [{"name": "includes"}, {"name": "judge"}]},
 "plan": {"steps": [{"solver": "system_message"}, {"solver": "react"}]}}`

// inspectSamples are two samples: one that used a tool and passed (its
// system prompt kept as an attachment), one that hit its message limit
// and errored.
var inspectSamples = []string{
	`{"id": "task-1", "epoch": 1, "input": "Find the flag.", "target": "flag{x}",
  "messages": [
   {"id": "m0", "role": "system", "content": "attachment://0a1b2c"},
   {"id": "m1", "role": "user", "content": "Find the flag.", "source": "input"},
   {"id": "m2", "role": "assistant", "content": [{"type": "reasoning", "reasoning": "ls first"}, {"type": "text", "text": ""}],
    "tool_calls": [{"id": "t1", "function": "bash", "arguments": {"cmd": "ls"}, "type": "function"}], "model": "gpt-4o-2024"},
   {"id": "m3", "role": "tool", "tool_call_id": "t1", "function": "bash", "content": "flag.txt"},
   {"id": "m4", "role": "assistant", "content": "flag{x}"}],
  "scores": {"judge": {"value": 0.5}, "includes": {"value": "C", "answer": "flag{x}"}},
  "events": [{"event": "sample_init", "timestamp": "2025-09-23T08:09:59-04:00"}, {"event": "model", "timestamp": "2025-09-23T08:10:05-04:00"}],
  "model_usage": {"openai/gpt-4o": {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120}},
  "attachments": {"0a1b2c": "You are a CTF player."}}`,
	`{"id": 2, "epoch": 1, "input": [{"role": "user", "content": "Decrypt it."}],
  "messages": [{"role": "user", "content": "Decrypt it."}, {"role": "assistant", "content": "Trying."}],
  "scores": {"includes": {"value": "I"}},
  "error": {"message": "RuntimeError: sandbox died", "traceback": "Traceback ..."},
  "limit": {"type": "message", "limit": 50},
  "started_at": "2025-09-23T12:00:00Z", "completed_at": "2025-09-23T12:01:00Z"}`,
}

// inspectArchiveBytes writes an .eval archive of the given members, in order.
func inspectArchiveBytes(t testing.TB, members ...[2]string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, m := range members {
		f, err := w.Create(m[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(f, m[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func inspectEval(t testing.TB) []byte {
	return inspectArchiveBytes(t,
		[2]string{"_journal/start.json", inspectHeaderJSON},
		[2]string{"samples/task-1_epoch_1.json", inspectSamples[0]},
		[2]string{"samples/2_epoch_1.json", inspectSamples[1]},
		[2]string{"samples/3_epoch_1.json", `{"id": 3, "messages": [`},
		[2]string{"header.json", inspectHeaderJSON},
		[2]string{"reductions.json", `[]`})
}

func TestInspectSniff(t *testing.T) {
	archive := inspectEval(t)
	tests := []struct {
		name string
		head []byte
		want bool
	}{
		{"archive", archive, true},
		{"archive cut after the first header", archive[:60], true},
		{"archive of samples only", inspectArchiveBytes(t, [2]string{"samples/1_epoch_1.json", "{}"}), true},
		{"another zip", inspectArchiveBytes(t, [2]string{"word/document.xml", "<x/>"}), false},
		{"JSON log", []byte(`{"version": 2, "status": "success", "eval": {"task": "x"}, "samples": [`), true},
		{"JSON log cut in the eval", []byte(`{"version": 2, "status": "started", "eval": {"task": "` + strings.Repeat("x", 100)), true},
		{"an object with eval alone", []byte(`{"eval": 1}`), false},
		{"not a zip", []byte("PK\x03\x04short"), false},
	}
	for _, tt := range tests {
		if got := (InspectAI{}).Sniff(tt.head); got != tt.want {
			t.Errorf("%s: Sniff = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// checkInspectSamples checks the two samples decoded from any form.
func checkInspectSamples(t *testing.T, traces []*trace.Trace) {
	t.Helper()
	if len(traces) != 2 {
		t.Fatalf("got %d traces", len(traces))
	}
	tr := traces[0]
	want := `0 system role=system type=instructions "You are a CTF player."
1 message role=user "Find the flag."
2 reasoning role=assistant "ls first"
3 tool_call role=assistant tool=bash id=t1 args={"cmd":"ls"} pair=4 ""
4 tool_result role=tool tool=bash id=t1 pair=3 "flag.txt"
5 final role=assistant "flag{x}"
`
	if got := stepLines(tr); got != want {
		t.Errorf("steps:\n%s\nwant\n%s", got, want)
	}
	if tr.ID != "inspect:E1:task-1:1" || tr.Model != "openai/gpt-4o" || tr.System != "system_message+react" || tr.Scenario != "task-1" || tr.Trial != "1" ||
		tr.Task != "Find the flag." || tr.Meta["target"] != "flag{x}" || tr.Meta["task"] != "ctf" {
		t.Errorf("id %q model %q system %q scenario %q trial %q task %q meta %v", tr.ID, tr.Model, tr.System, tr.Scenario, tr.Trial, tr.Task, tr.Meta)
	}
	// The eval's first scorer decides, whatever the order of the sample's scores.
	if o := tr.Outcomes; len(o) != 1 || o[0].Metric != "includes" || !*o[0].Success || o[0].Detail != "judge=0.5 includes=\"C\"\nanswer: flag{x}" {
		t.Errorf("outcome %+v", o)
	}
	if tr.Started.Format("15:04:05") != "12:09:59" || tr.Ended.Format("15:04:05") != "12:10:05" || tr.Usage.TotalTokens != 120 {
		t.Errorf("times %v %v, usage %+v", tr.Started, tr.Ended, tr.Usage)
	}
	failed := traces[1]
	want = `0 message role=user "Decrypt it."
1 final role=assistant "Trying."
2 error role=harness type=error "RuntimeError: sandbox died\nTraceback ..."
3 error role=harness type=limit "message limit reached (50)"
`
	if got := stepLines(failed); got != want {
		t.Errorf("steps:\n%s\nwant\n%s", got, want)
	}
	if o := failed.Outcomes; len(o) != 1 || *o[0].Success || failed.Task != "Decrypt it." || failed.Started.Minute() != 0 || failed.Ended.Minute() != 1 {
		t.Errorf("outcome %+v, task %q, times %v %v", o, failed.Task, failed.Started, failed.Ended)
	}
}

func TestInspectArchive(t *testing.T) {
	archive := inspectEval(t)
	// Read in place (a file) and from a stream (standard input).
	for name, r := range map[string]io.Reader{"in place": bytes.NewReader(archive), "stream": struct{ io.Reader }{bytes.NewReader(archive)}} {
		traces, issues := decodeWith(t, InspectAI{}, "log.eval", r)
		checkInspectSamples(t, traces)
		errs := issueTexts(issues, Error)
		if len(errs) != 1 || !strings.HasPrefix(errs[0], "log.eval: samples/3_epoch_1.json:1: invalid JSON at byte 23: unexpected end of JSON input; sample skipped") {
			t.Errorf("%s: errors %q", name, errs)
		}
	}
	broken := archive[:len(archive)-10]
	traces, issues := decodeWith(t, InspectAI{}, "cut.eval", bytes.NewReader(broken))
	if len(traces) != 0 || len(issues) != 1 || !strings.Contains(issues[0].String(), "cut.eval: not a readable zip archive") {
		t.Errorf("a cut archive: traces %d, issues %v", len(traces), issues)
	}
}

func TestInspectJSONLog(t *testing.T) {
	log := "{\"version\": 2, \"status\": \"success\",\n \"eval\": {\"eval_id\": \"E1\", \"task\": \"ctf\", \"model\": \"openai/gpt-4o\", \"scorers\": [{\"name\": \"includes\"}]},\n" +
		" \"plan\": {\"steps\": [{\"solver\": \"system_message\"}, {\"solver\": \"react\"}]},\n \"results\": {\"scores\": []},\n \"samples\": [\n" +
		inspectSamples[0] + ",\n" + inspectSamples[1] + ",\n {\"id\": 3, \"messages\": 5}\n ],\n \"reductions\": []}\n"
	traces, issues := decodeWith(t, InspectAI{}, "log.json", &chunkReader{data: []byte(log), n: 7})
	if len(traces) == 3 {
		traces = traces[:2]
	}
	checkInspectSamples(t, traces)
	if errs := issueTexts(issues, Error); len(errs) != 1 || errs[0] != `log.json:24: record 2 (line 24): field "messages" should be an array, found a number; messages skipped` {
		t.Errorf("errors %q", errs)
	}
	// A log cut inside its samples keeps those read before.
	cut := log[:strings.Index(log, inspectSamples[1])+20]
	traces, issues = decodeWith(t, InspectAI{}, "cut.json", strings.NewReader(cut))
	if len(traces) != 1 || len(issues) != 1 || !strings.Contains(issues[0].String(), "truncated JSON: the file ends inside a record; reading stopped after 1 samples") {
		t.Errorf("cut log: traces %d, issues %v", len(traces), issues)
	}
	if traces, issues := decodeWith(t, InspectAI{}, "none.json", strings.NewReader(`{"eval": {}, "samples": null}`)); len(traces) != 0 || len(issueTexts(issues, Notice)) != 1 {
		t.Errorf("a log of no samples: traces %d, issues %v", len(traces), issues)
	}
	for _, bad := range []string{`[1, 2]`, `{"samples": {"a": 1}}`, ``} {
		traces, issues := decodeWith(t, InspectAI{}, "bad.json", strings.NewReader(bad))
		if len(traces) != 0 || len(issueTexts(issues, Error)) != 1 {
			t.Errorf("%q: traces %d, issues %v", bad, len(traces), issues)
		}
	}
}

func TestInspectSample(t *testing.T) {
	path := shared.Path(t, "samples/inspect/security-guide.eval")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !(InspectAI{}).Sniff(data[:min(len(data), SniffSize)]) {
		t.Error("the archive does not sniff as Inspect's")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	traces, issues := decodeWith(t, InspectAI{}, path, f)
	if len(traces) != 16 || len(issues) != 0 {
		t.Fatalf("traces %d, issues %v", len(traces), issues)
	}
	succeeded := 0
	for _, tr := range traces {
		if len(tr.Steps) != 3 || tr.Steps[0].Type != "instructions" || tr.Steps[2].Kind != trace.KindFinal || tr.Model != "openai/gpt-4o-mini" || tr.Task == "" || tr.Started.IsZero() {
			t.Errorf("%s: %s model %q task %q", tr.ID, stepLines(tr), tr.Model, tr.Task)
		}
		if o := trace.PrimaryOutcome(tr.Outcomes); o != nil && *o.Success {
			succeeded++
		}
	}
	// The log's own accuracy is 0.6875: 11 of 16.
	if succeeded != 11 {
		t.Errorf("%d samples succeeded, want 11", succeeded)
	}
}

func FuzzInspect(f *testing.F) {
	f.Add(inspectEval(f))
	f.Add(inspectArchiveBytes(f, [2]string{"samples/1_epoch_1.json", `{"messages": [{"role": "tool"}], "limit": {"type": "token"}}`}))
	f.Add([]byte(`{"eval": {"scorers": [{"name": "a"}]}, "samples": [` + inspectSamples[1] + `, null], "version": 2}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzFormat(t, InspectAI{}, data) })
}

// A sample is read member by member: its events for their times only,
// in whatever shape; its attachments before or after its messages; a
// member of the wrong type still skips the sample, at its line; and what
// follows the sample, or the log, is reported.
func TestInspectSampleStreaming(t *testing.T) {
	const msgs = `"messages": [{"role": "system", "content": "attachment://aa"}, {"role": "user", "content": "go"}, {"role": "assistant", "content": "done"}]`
	tests := []struct {
		name   string
		log    string // the .json log; a sample alone goes in an archive
		sample string
		steps  string // the first step's text
		times  string
		errors []string
	}{
		{name: "attachments after the messages", sample: `{"id": 1, ` + msgs + `, "attachments": {"aa": "You are a tester.", "bb": "unused"}}`,
			steps: "You are a tester."},
		{name: "attachments before the messages", sample: `{"id": 1, "attachments": {"aa": "You are a tester."}, ` + msgs + `}`,
			steps: "You are a tester."},
		{name: "events of any shape give their times", sample: `{"id": 1, ` + msgs + `, "events": [{"timestamp": "2025-01-01T00:00:05Z"}, 3, {"timestamp": 7}, [], {"timestamp": "2025-01-01T00:00:01Z", "input": [{"content": "x"}]}]}`,
			steps: "attachment://aa", times: "00:00:01 00:00:05"},
		{name: "events not a list", sample: `{"id": 1, ` + msgs + `, "events": {"a": [1, {"b": 2}]}}`, steps: "attachment://aa"},
		{name: "a member of the wrong type skips the sample at its line", sample: "{\"id\": 1,\n" + msgs + ",\n\"attachments\": [1],\n \"events\": []}",
			errors: []string{`log.eval: samples/1_epoch_1.json:3: field "attachments" should be an object, found an array; sample skipped`}},
		{name: "not an object", sample: `[1, 2]`,
			errors: []string{`log.eval: samples/1_epoch_1.json:1: a record should be an object, found an array; sample skipped`}},
		{name: "more after the sample", sample: `{"id": 1, ` + msgs + `} {}`,
			errors: []string{`log.eval: samples/1_epoch_1.json:1: invalid JSON at byte 150: more after the sample; sample skipped`}},
		{name: "more after the log", log: `{"eval": {"eval_id": "E"}, "samples": [{"id": 1, ` + msgs + `}]} {"x": 1}`,
			steps: "attachment://aa", errors: []string{`log.eval:1: more after the log's object, which ends at byte 191; not read`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.log)
			if tc.log == "" {
				data = inspectArchiveBytes(t, [2]string{"samples/1_epoch_1.json", tc.sample})
			}
			traces, issues := decodeWith(t, InspectAI{}, "log.eval", bytes.NewReader(data))
			if errs := issueTexts(issues, Error); strings.Join(errs, "\n") != strings.Join(tc.errors, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(errs, "\n"), strings.Join(tc.errors, "\n"))
			}
			if tc.steps == "" {
				if len(traces) != 0 {
					t.Errorf("%d traces, want none", len(traces))
				}
				return
			}
			if len(traces) != 1 || len(traces[0].Steps) == 0 || traces[0].Steps[0].Text != tc.steps {
				t.Fatalf("traces %d: %s", len(traces), stepLines(traces[0]))
			}
			if tc.times != "" {
				if got := traces[0].Started.Format("15:04:05") + " " + traces[0].Ended.Format("15:04:05"); got != tc.times {
					t.Errorf("times %s, want %s", got, tc.times)
				}
			}
		})
	}
}
