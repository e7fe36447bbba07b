package detect

import (
	"github.com/faultline/faultline/internal/text"
	"github.com/faultline/faultline/trace"
)

// InfrastructureError finds SYS-2: the harness or a tool server failed on its own account.
var InfrastructureError = &Detector{
	Name: "infrastructure-error",
	Mode: "SYS-2",
	Doc: `The harness or a tool server failed on its own account.
It reports the run's error events other than aborted turns (Codex "error" and "stream_error"), and
failed tool results that say the tool itself was unreachable: a tool or MCP server down or crashed,
a call that timed out waiting for the tool server, a refused or reset connection, a 502, 503 or 504
from a gateway, a broken pipe. Errors that rate-limited or context-overflow claim are left to them.
All such steps are one finding; confidence 0.85, or 0.7 when the only evidence is a failed tool
result.
Blind spots: a tool that fails because of the agent's own bad input is the agent's business and not
reported, but a tool bug that looks like that (an exception on valid input) is missed too; timeouts
of the web pages or APIs an agent browses are the task's environment and not reported.`,
	Run: runInfrastructureError,
}

var (
	toolServerDown = text.Regexp(`(?i)\b(?:mcp|tool)[ _-]?server\b[^\n]{0,60}\b(?:error|unavailable|not running|crashed|failed|closed|disconnected|exited)\b|\btimed out awaiting tools/call\b|\bconnection (?:refused|reset by peer)\b|\b(?:502 bad gateway|503 service unavailable|504 gateway time-?out)\b|\bbroken pipe\b`)
	// othersClaim matches what the more specific system detectors report.
	othersClaim = text.Regexp(rateLimitPattern + "|" + contextOverflowPattern)
)

func runInfrastructureError(p *Pass) {
	serverDown := matchText(toolServerDown(), othersClaim(), "server", "timed out", "connection", "gateway", "unavailable", "broken pipe")
	reportHarnessText(p, func(s *trace.Step, r harnessText) int {
		// An error event is a failure in itself, whatever it says.
		if s.Kind == trace.KindError {
			if othersClaim().MatchString(r.text) {
				return -1
			}
			return 0
		}
		return serverDown(s, r)
	}, 0.85, 0.7, "The harness or a tool server failed")
}
