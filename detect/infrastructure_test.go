package detect

import (
	"strings"
	"testing"
)

func TestInfrastructureError(t *testing.T) {
	runCases(t, InfrastructureError, []detCase{
		{name: "a clean run", trace: build(`user go`, `call shell {} => ok`, `final done`)},
		{name: "a stream error event", trace: build(`user go`, `error stream_error stream disconnected before completion`, `say retrying`),
			want: [][]int{{1}}, quote: "stream disconnected before completion", conf: 0.85},
		{name: "a tool server that is down", trace: build(`user go`, `fail mcp__srv__logs {} => MCP server "srv" failed to start: exited with status 1`),
			want: [][]int{{2}}, conf: 0.7},
		{name: "a tool rejecting bad input is the agent's business", trace: build(`user go`, `fail shell {"cmd":"cat x"} => cat: x: No such file or directory`)},
		{name: "an aborted turn is not an infrastructure error", trace: build(`user go`, `say hm`, `error turn_aborted turn aborted: interrupted`)},
		{name: "a rate limit is left to rate-limited", trace: build(`user go`, `error error Rate limit reached for gpt-x`)},
		{name: "application data that mentions a gateway is not an event", trace: build(`user go`, `call shell {"cmd":"grep 503 logs"} => 503 Service Unavailable from frontend`)},
	})
}

func TestRateLimited(t *testing.T) {
	runCases(t, RateLimited, []detCase{
		{name: "no limit", trace: build(`user go`, `say ok`)},
		{name: "an error event", trace: build(`user go`, `error error 429 Too Many Requests: rate limit exceeded, retry in 20s`),
			want: [][]int{{1}}, conf: 0.9},
		{name: "a harness log line", trace: build(`user go`, `system Rate limit reached for requests; waiting 20s`, `say ok`, `system quota exceeded for model x`),
			want: [][]int{{1, 3}}, quote: "Rate limit reached for requests; waiting 20s"},
		{name: "a failed tool result", trace: build(`user go`, `fail shell {"cmd":"curl api"} => HTTP 429 Too Many Requests`),
			want: [][]int{{2}}, conf: 0.7},
		{name: "logs the agent reads are data, not events", trace: build(`user go`, `call shell {"cmd":"grep limit logs"} => rate limit exceeded for user 42`)},
		{name: "a long harness log is read by its first line only",
			trace: build(`user go`, `system Step 1: fine`+longTail+`\nRate limit reached`)},
	})
}

func TestContextOverflow(t *testing.T) {
	runCases(t, ContextOverflow, []detCase{
		{name: "no overflow", trace: build(`user go`, `system context compacted`)},
		{name: "an error event", trace: build(`user go`, `say ok`, `error error This model's maximum context length is 128000 tokens`),
			want: [][]int{{2}}, quote: "This model's maximum context length is 128000 tokens", conf: 0.9},
		{name: "provider wording", trace: build(`user go`, `error stream_error context_length_exceeded`), want: [][]int{{1}}},
		{name: "the agent's own words are not events", trace: build(`user go`, `say my context window is exceeded, summarising`)},
	})
}

// longTail pads a harness event past the length at which only its first
// line is read.
var longTail = strings.Repeat(`\npadding line`, 60)
