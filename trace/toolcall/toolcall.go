// Package toolcall is the one reading of what an agent's tool call does: the
// command line it runs, whether it succeeded, which files it writes and
// prints, and, over a whole run, what a file holds at the end. Ingest,
// detectors and scorers ask it rather than parsing commands each their own
// way, so that they cannot disagree about what a call did.
//
// It depends on the trace model only.
package toolcall

import (
	"encoding/json"
	"strings"

	"github.com/faultline/faultline/internal/jsonscan"
	"github.com/faultline/faultline/trace"
)

// shellWrappers are interpreters whose "-c" argument is the real command.
var shellWrappers = map[string]bool{
	"bash": true, "sh": true, "zsh": true, "/bin/bash": true, "/bin/sh": true, "/bin/zsh": true,
	"/usr/bin/bash": true, "/usr/bin/zsh": true,
}

// Command returns the command line a tool call runs, read from its
// arguments as the agent wrote them: a "command" given as an argv list (the
// script of `bash -lc SCRIPT` when it is one) or a string, else a "cmd",
// "input", "code" or "script" string; the arguments themselves when they are
// not a JSON object.
func Command(args string) string { return Decode(args).Command }

// Call is a tool call's arguments read once for the several questions
// asked of them: decoded to their top level (nil when they are not a JSON
// object) and the command they run (see Command).
type Call struct {
	Args    map[string]json.RawMessage
	Command string
}

// Decode reads a call's arguments.
func Decode(args string) Call {
	top := argsObject(args)
	return Call{Args: top, Command: CommandOf(args, top)}
}

// argsObject decodes a call's arguments to their top level; nil when they
// are not a JSON object.
func argsObject(args string) map[string]json.RawMessage {
	if !strings.HasPrefix(strings.TrimSpace(args), "{") {
		return nil
	}
	top, err := jsonscan.RawObject([]byte(args))
	if err != nil {
		return nil
	}
	return top
}

// CommandOf is Command over arguments already decoded to their top level,
// for callers that need other fields of the same object.
func CommandOf(raw string, top map[string]json.RawMessage) string {
	if top == nil {
		return raw
	}
	var argv []string
	switch c := top["command"]; {
	case isJSON(c, '[') && json.Unmarshal(c, &argv) == nil && len(argv) > 0:
		if len(argv) >= 3 && shellWrappers[argv[0]] && strings.HasPrefix(argv[1], "-") && strings.HasSuffix(argv[1], "c") {
			return strings.Join(argv[2:], " ")
		}
		return strings.Join(argv, " ")
	case isJSON(c, '"'):
		if str := jsonString(c); str != "" {
			return str
		}
	}
	for _, k := range []string{"cmd", "input", "code", "script"} {
		if str := jsonString(top[k]); str != "" {
			return str
		}
	}
	return raw
}

// isJSON reports whether a raw value opens with the given byte: a field
// absent or of another type is passed over without a decode, whose error
// (allocated) every tool call of every trace would pay.
func isJSON(raw json.RawMessage, open byte) bool {
	return len(raw) > 0 && raw[0] == open
}

// jsonString is a raw JSON string's value, "" when it is not one.
func jsonString(raw json.RawMessage) string {
	if !isJSON(raw, '"') {
		return ""
	}
	s, err := jsonscan.String(raw)
	if err != nil {
		return ""
	}
	return s
}

// Failed reports whether the tool call at step call has a result that
// reports a failure: an error flag, or a non-zero exit status (a sandbox
// that refused to run the command exits non-zero too). A call without a
// result (a run cut short, a format that does not pair calls with results)
// has neither failed nor succeeded.
func Failed(t *trace.Trace, call int) bool {
	r := t.Result(call)
	return r != nil && (r.IsError || (r.ExitCode != nil && *r.ExitCode != 0))
}

// Succeeded reports whether the tool call at step call has a result that
// reports no failure.
func Succeeded(t *trace.Trace, call int) bool {
	return t.Result(call) != nil && !Failed(t, call)
}

// Output returns the text of the call's result, "" when it has none.
func Output(t *trace.Trace, call int) string {
	if r := t.Result(call); r != nil {
		return r.Text
	}
	return ""
}
