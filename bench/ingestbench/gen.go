package main

import (
	"archive/zip"
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// The files bench/longline.sh measures: each holds its size in one place.

// shapes describes the shapes generate writes.
const shapes = "codex (a rollout whose one function_call_output holds the size, as Codex's shell output JSON), " +
	"chat (one OpenAI chat line whose tool message holds it), " +
	"inspect-json (an Inspect .json log of one sample on one line: half one tool output, half model events), " +
	"inspect-eval (the same sample in an .eval archive)"

// generate writes a file of the shape whose long part is size bytes.
func generate(shape string, size int, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	switch shape {
	case "codex":
		err = writeAround(w, codexAround, size, 2)
	case "chat":
		err = writeAround(w, chatAround, size, 1)
	case "inspect-json":
		err = genInspect(w, size)
	case "inspect-eval":
		zw := zip.NewWriter(w)
		var hw io.Writer
		if hw, err = zw.Create("header.json"); err == nil {
			_, err = io.WriteString(hw, `{"version": 2, "status": "success", "eval": {"eval_id": "E1", "run_id": "R1", "task": "logs", "model": "openai/gpt-4o", "scorers": [{"name": "includes"}]}}`)
		}
		var sw io.Writer
		if err == nil {
			sw, err = zw.Create("samples/1_epoch_1.json")
		}
		if err == nil {
			bw := bufio.NewWriterSize(sw, 1<<20)
			if err = genInspectSample(bw, size); err == nil {
				err = bw.Flush()
			}
		}
		if err == nil {
			err = zw.Close()
		}
	default:
		err = fmt.Errorf("unknown shape %q", shape)
	}
	if err != nil {
		return err
	}
	return w.Flush()
}

// logLine is one line of the long tool output: a service failing over and
// over, as the logs agents read back whole do.
func logLine(i int) string {
	return fmt.Sprintf("2026-01-15T12:%02d:%02d.%03dZ pod/checkout-7f9c4 ERROR dial tcp 10.0.3.17:8080: connection refused (attempt %d)\n", i/60000%60, i/1000%60, i%1000, i)
}

// writeText writes size bytes of log lines, escaped levels times as JSON
// string content (a newline is \n once, \\n twice).
func writeText(w *bufio.Writer, size, levels int) error {
	nl := `\n`
	if levels == 2 {
		nl = `\\n`
	}
	for i, n := 0, 0; n < size; i++ {
		line := strings.TrimSuffix(logLine(i), "\n") + nl
		if _, err := w.WriteString(line); err != nil {
			return err
		}
		n += len(line)
	}
	return nil
}

// codexAround is a rollout around its one long output, Codex's shell
// output JSON as a string (so its text is escaped twice).
var codexAround = [2]string{`{"timestamp":"2026-01-15T12:00:00.000Z","type":"session_meta","payload":{"id":"longline","timestamp":"2026-01-15T12:00:00.000Z","cwd":"/w","originator":"codex_exec","cli_version":"0.80.0","instructions":"Find the root cause of the checkout failures."}}
{"timestamp":"2026-01-15T12:00:00.100Z","type":"turn_context","payload":{"cwd":"/w","model":"gpt-5-codex"}}
{"timestamp":"2026-01-15T12:00:00.200Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Find the root cause of the checkout failures."}]}}
{"timestamp":"2026-01-15T12:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"kubectl\",\"logs\",\"deploy/checkout\"]}","call_id":"call_1"}}
{"timestamp":"2026-01-15T12:00:09.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"{\"output\":\"`, `\",\"metadata\":{\"exit_code\":1,\"duration_seconds\":8.0}}"}}
{"timestamp":"2026-01-15T12:00:10.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"checkout cannot reach payments on 8080: the payments service is down."}]}}
{"timestamp":"2026-01-15T12:00:10.100Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1000,"output_tokens":50,"total_tokens":1050},"last_token_usage":{"output_tokens":50}}}}
`}

// chatAround is one OpenAI chat line around its tool message's text.
var chatAround = [2]string{`{"id":"longline","model":"gpt-4o","messages":[{"role":"system","content":"You are an SRE agent."},{"role":"user","content":"Find the root cause of the checkout failures."},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"logs","arguments":"{\"deploy\":\"checkout\"}"}}]},{"role":"tool","tool_call_id":"c1","content":"`, `"},{"role":"assistant","content":"checkout cannot reach payments on 8080."}]}` + "\n"}

// writeAround writes the long text, escaped levels times, between the two
// halves of a file.
func writeAround(w *bufio.Writer, around [2]string, size, levels int) error {
	if _, err := w.WriteString(around[0]); err != nil {
		return err
	}
	if err := writeText(w, size, levels); err != nil {
		return err
	}
	_, err := w.WriteString(around[1])
	return err
}

func genInspect(w *bufio.Writer, size int) error {
	if _, err := w.WriteString(`{"version": 2, "status": "success", "eval": {"eval_id": "E1", "run_id": "R1", "task": "logs", "model": "openai/gpt-4o", "scorers": [{"name": "includes"}]}, "samples": [`); err != nil {
		return err
	}
	if err := genInspectSample(w, size); err != nil {
		return err
	}
	_, err := w.WriteString("]}\n")
	return err
}

// genInspectSample writes one sample on one line: half its size in one
// tool output, half in model events, each holding the conversation so far
// (as Inspect logs every model call's input).
func genInspectSample(w *bufio.Writer, size int) error {
	msgs := `[{"role": "system", "content": "You are an SRE agent."}, {"role": "user", "content": "Find the root cause."}, {"role": "assistant", "content": "", "tool_calls": [{"id": "t1", "function": "bash", "arguments": {"cmd": "kubectl logs deploy/checkout"}}]}, {"role": "tool", "tool_call_id": "t1", "function": "bash", "content": "`
	if _, err := w.WriteString(`{"id": "logs-1", "epoch": 1, "input": "Find the root cause.", "target": "payments", "messages": ` + msgs); err != nil {
		return err
	}
	if err := writeText(w, size/2, 1); err != nil {
		return err
	}
	if _, err := w.WriteString(`"}, {"role": "assistant", "content": "payments is down"}], "scores": {"includes": {"value": "C"}}, "events": [`); err != nil {
		return err
	}
	// Each model event: the history of a 10-turn conversation, 100 KB.
	var turn strings.Builder
	for turn.Len() < 10000 {
		turn.WriteString(logLine(turn.Len()))
	}
	history, _ := json.Marshal(turn.String())
	for n, i := 0, 0; n < size/2; i++ {
		if i > 0 {
			if err := w.WriteByte(','); err != nil {
				return err
			}
		}
		ev := fmt.Sprintf(`{"event": "model", "timestamp": "2026-01-15T12:%02d:%02dZ", "input": [`, i/60%60, i%60)
		for k := 0; k < 10; k++ {
			if k > 0 {
				ev += ","
			}
			ev += `{"role": "tool", "content": ` + string(history) + `}`
		}
		ev += `], "output": {"choices": []}}`
		if _, err := w.WriteString(ev); err != nil {
			return err
		}
		n += len(ev)
	}
	_, err := w.WriteString(`], "model_usage": {"openai/gpt-4o": {"input_tokens": 1000, "output_tokens": 50, "total_tokens": 1050}}}`)
	return err
}
