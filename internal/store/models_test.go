package store

import (
	"slices"
	"testing"
)

func TestCanonicalModel(t *testing.T) {
	tests := []struct{ model, want string }{
		{"gpt-oss-120b", "gpt-oss-120b"},
		{"openai/gpt-oss-120b", "gpt-oss-120b"},
		{"watsonx/openai/gpt-oss-120b", "gpt-oss-120b"},
		{"Watsonx/OpenAI/gpt-oss-120b", "gpt-oss-120b"},
		{"azure/gpt-4.1-mini", "gpt-4.1-mini"},
		{"bedrock/anthropic.claude-3-5-sonnet", "anthropic.claude-3-5-sonnet"},
		{"anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"},
		{"vertex_ai/gemini-2.5-flash", "gemini-2.5-flash"},
		{"openrouter/google/gemini-2.5-flash", "gemini-2.5-flash"},
		{"google/gemini-2.5-flash", "gemini-2.5-flash"},
		{"x-ai/grok-4-fast", "grok-4-fast"},
		// Hub organisations are part of an open-weights model's name.
		{"google/gemma-2-9b-it", "google/gemma-2-9b-it"},
		{"together_ai/meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct"},
		{"meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct"},
		{"groq/qwen/qwen3-32b", "qwen/qwen3-32b"},
		{"hosted_vllm/Qwen/Qwen3-8B", "Qwen/Qwen3-8B"},
		{"ollama/llama3.1:8b", "llama3.1:8b"},
		// A prefix alone is a name, not a prefix of one.
		{"openai/", "openai/"},
		{"openai", "openai"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := CanonicalModel(tt.model); got != tt.want {
			t.Errorf("CanonicalModel(%q) = %q, want %q", tt.model, got, tt.want)
		}
	}
}

func TestModelAliases(t *testing.T) {
	a := ModelAliases{
		"gpt-oss-120b-fp8":                 "gpt-oss-120b",
		"meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b",
		"openai/special":                   "special-as-written",
	}
	tests := []struct{ model, want string }{
		{"gpt-oss-120b-fp8", "gpt-oss-120b"},
		{"watsonx/gpt-oss-120b-fp8", "gpt-oss-120b"}, // the rules, then the table
		{"together_ai/meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"},
		{"openai/special", "special-as-written"}, // the table first
		{"openai/gpt-oss-120b", "gpt-oss-120b"},
		{"other", "other"},
	}
	for _, tt := range tests {
		if got := a.Canonical(tt.model); got != tt.want {
			t.Errorf("Canonical(%q) = %q, want %q", tt.model, got, tt.want)
		}
	}
	if got := ModelAliases(nil).Canonical("openai/x"); got != "x" {
		t.Errorf("nil table: %q", got)
	}
	stored := []string{"gpt-oss-120b", "openai/gpt-oss-120b", "gpt-oss-120b-fp8", "gemini-2.5-flash", ""}
	for _, tt := range []struct {
		want  []string
		match []string
	}{
		{[]string{"gpt-oss-120b"}, []string{"gpt-oss-120b", "openai/gpt-oss-120b", "gpt-oss-120b-fp8"}},
		{[]string{"watsonx/openai/gpt-oss-120b"}, []string{"gpt-oss-120b", "openai/gpt-oss-120b", "gpt-oss-120b-fp8", "watsonx/openai/gpt-oss-120b"}},
		{[]string{"gemini-2.5-flash", "nothing"}, []string{"gemini-2.5-flash", "nothing"}},
		{[]string{""}, []string{""}},
		{[]string{}, []string{}},
	} {
		if got := a.Matching(tt.want, stored); !slices.Equal(got, tt.match) {
			t.Errorf("Matching(%q) = %q, want %q", tt.want, got, tt.match)
		}
	}
}
