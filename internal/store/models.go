package store

import (
	"slices"
	"strings"
)

// ModelAliases maps model names, as traces write them, to canonical names,
// over the built-in rules of CanonicalModel: the models section of
// faultline.yaml. The stored model stays as written; reports group by the
// canonical name and filters match it, so that one model served through
// several providers is one group. A nil table applies the built-in rules
// alone.
type ModelAliases map[string]string

// Canonical names a model canonically: the table's name for it as written
// when it has one; otherwise the built-in rules' name, or the table's name
// for that.
func (a ModelAliases) Canonical(model string) string {
	if c, ok := a[model]; ok {
		return c
	}
	c := CanonicalModel(model)
	if to, ok := a[c]; ok {
		return to
	}
	return c
}

// Matching returns the model names a filter on want selects: those of
// names (the stored ones) whose canonical name is that of one of want, and
// want itself.
func (a ModelAliases) Matching(want, names []string) []string {
	canon := map[string]bool{}
	for _, w := range want {
		canon[a.Canonical(w)] = true
	}
	out := []string{}
	for _, n := range names {
		if canon[a.Canonical(n)] {
			out = append(out, n)
		}
	}
	for _, w := range want {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// routePrefixes name where a call went rather than which model answered
// it: providers, clouds, routers and local servers, as LiteLLM and the
// routers write them before a model name (watsonx/openai/gpt-oss-120b is
// gpt-oss-120b served by watsonx). A prefix applies only before a model
// name that starts with one of its families, when it has any.
//
// openai/ is LiteLLM's prefix for any OpenAI-compatible server, and the
// Hugging Face organisation of gpt-oss, whose bare name is unambiguous:
// stripped either way. google/ and x-ai/ are OpenRouter's names for the
// publishers of closed models, whose own APIs write the bare name (gemini-…,
// grok-…); google/gemma-… is the model's id on the Hugging Face hub and is
// kept. So are the hub's organisations of open-weights models (meta-llama/,
// mistralai/, Qwen/, deepseek-ai/, …): there the organisation is part of the
// model's name, and another organisation's model of the same base name
// (a fine-tune, a quantisation) is other weights.
var routePrefixes = []struct {
	prefix   string
	families []string
}{
	{"openai/", nil}, {"azure/", nil}, {"azure_ai/", nil}, {"watsonx/", nil}, {"watsonx_text/", nil},
	{"bedrock/", nil}, {"bedrock_converse/", nil}, {"sagemaker/", nil},
	{"vertex_ai/", nil}, {"vertex_ai_beta/", nil}, {"gemini/", nil},
	{"anthropic/", nil}, {"openrouter/", nil}, {"together/", nil}, {"together_ai/", nil},
	{"groq/", nil}, {"fireworks_ai/", nil}, {"deepinfra/", nil}, {"anyscale/", nil},
	{"cerebras/", nil}, {"sambanova/", nil}, {"nebius/", nil}, {"novita/", nil},
	{"databricks/", nil}, {"nvidia_nim/", nil}, {"replicate/", nil}, {"perplexity/", nil},
	{"huggingface/", nil}, {"hosted_vllm/", nil}, {"vllm/", nil}, {"ollama/", nil},
	{"ollama_chat/", nil}, {"lm_studio/", nil}, {"litellm_proxy/", nil},
	{"google/", []string{"gemini"}}, {"x-ai/", []string{"grok"}},
}

// CanonicalModel applies the built-in rules: the provider and router
// prefixes before a model name are stripped, one after another, ignoring
// case (Watsonx/openai/gpt-oss-120b is gpt-oss-120b). Nothing else of the
// name changes.
func CanonicalModel(model string) string {
	for {
		rest, ok := stripRoute(model)
		if !ok || rest == "" {
			return model
		}
		model = rest
	}
}

func stripRoute(model string) (string, bool) {
	for _, r := range routePrefixes {
		if len(model) <= len(r.prefix) || !strings.EqualFold(model[:len(r.prefix)], r.prefix) {
			continue
		}
		rest := model[len(r.prefix):]
		if r.families == nil || slices.ContainsFunc(r.families, func(f string) bool { return hasPrefixFold(rest, f) }) {
			return rest, true
		}
	}
	return "", false
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
