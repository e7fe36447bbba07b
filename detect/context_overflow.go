package detect

import "github.com/faultline/faultline/internal/text"

// ContextOverflow finds SYS-4: the conversation outgrew the context window.
var ContextOverflow = &Detector{
	Name: "context-overflow",
	Mode: "SYS-4",
	Doc: `A request of the run was refused or cut because the conversation outgrew the context window.
It reads the run's error events, harness and system events, and failed tool results for the wording
model providers and harnesses use ("context_length_exceeded", "maximum context length", "prompt is
too long", "exceeds the context window"). All such steps are one finding; confidence 0.9, or 0.7
when the only evidence is a failed tool result.
Blind spots: harnesses that compact or truncate the history silently (a Codex "compacted" step is
not an overflow), and overflows reported in other words.`,
	Run: runContextOverflow,
}

// contextOverflowPattern is what an overflow says; infrastructure-error
// leaves it to this detector.
const contextOverflowPattern = `(?i)\bcontext[ _-]?(?:length|window)[ _-]?(?:exceeded|is exceeded|overflow)|\bcontext_length_exceeded\b|\bmaximum context length\b|\bprompt is too long\b|\bexceeds? (?:the|your|its) (?:model'?s )?context (?:window|length)\b|\btoo many tokens\b`

var contextOverflowText = text.Regexp(contextOverflowPattern)

func runContextOverflow(p *Pass) {
	reportHarnessText(p, matchText(contextOverflowText(), nil, "context", "prompt is too long", "tokens"), 0.9, 0.7, "The conversation no longer fitted in the model's context window")
}
