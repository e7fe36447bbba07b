package otel

import "strings"

// kind is what a span is to the mapping.
type kind int

const (
	kindOther kind = iota
	kindLLM
	kindTool
	kindAgent
)

func kindOf(s *Span) kind {
	a := s.Attrs
	switch a["gen_ai.operation.name"] {
	case "chat", "text_completion", "generate_content", "completion":
		return kindLLM
	case "execute_tool":
		return kindTool
	case "invoke_agent":
		return kindAgent
	case "":
	default:
		return kindOther // embeddings, create_agent, retrieval: no step of their own
	}
	switch strings.ToUpper(a["openinference.span.kind"]) {
	case "LLM":
		return kindLLM
	case "TOOL":
		return kindTool
	case "AGENT":
		return kindAgent
	}
	switch a["traceloop.span.kind"] {
	case "tool":
		return kindTool
	case "agent":
		return kindAgent
	}
	if a["gen_ai.tool.name"] != "" {
		return kindTool
	}
	// The older conventions name no operation: a span about a model is a call.
	if a["llm.request.type"] != "embedding" && (a["gen_ai.system"] != "" || a["gen_ai.provider.name"] != "" ||
		a["gen_ai.request.model"] != "" || hasPrefixKey(a, "gen_ai.prompt.") || hasPrefixKey(a, "gen_ai.completion.")) {
		return kindLLM
	}
	return kindOther
}

func hasPrefixKey(a map[string]string, prefix string) bool {
	for k := range a {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}
