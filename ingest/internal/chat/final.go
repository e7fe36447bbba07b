package chat

import "github.com/faultline/faultline/trace"

// MarkFinal turns the last assistant message into the final answer when no
// tool call follows it and the harness did not have to re-prompt after it
// (a message the harness answers with a retry did not end the run).
func MarkFinal(t *trace.Trace) {
	for i := len(t.Steps) - 1; i >= 0; i-- {
		s := &t.Steps[i]
		switch {
		case s.Kind == trace.KindToolCall, s.Type == trace.TypeRetryNudge:
			return
		case s.Kind == trace.KindMessage && s.Role == trace.RoleAssistant:
			s.Kind = trace.KindFinal
			return
		}
	}
}
