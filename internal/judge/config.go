package judge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"gopkg.in/yaml.v3"
)

// Config is the judge's section of a faultline configuration file:
//
//	judge:
//	  model: gpt-4.1-mini
//	  base_url: https://api.openai.com/v1
//	  api_key_env: OPENAI_API_KEY
//	  concurrency: 8
//	  models:
//	    gpt-4.1-mini: {context: 1000000, price: {input: 0.40, output: 1.60}}
//
// Zero values mean "not set": the command's flags and defaults fill them in.
type Config struct {
	Model string `yaml:"model"`
	// BaseURL is the API root of an OpenAI-compatible endpoint.
	BaseURL string `yaml:"base_url"`
	// APIKeyEnv names the environment variable holding the API key. The key
	// itself never belongs in a file.
	APIKeyEnv         string        `yaml:"api_key_env"`
	Concurrency       int           `yaml:"concurrency"`
	Samples           int           `yaml:"samples"`
	RequestsPerMinute float64       `yaml:"requests_per_minute"`
	Timeout           time.Duration `yaml:"timeout"`
	Retries           *int          `yaml:"retries"`
	ResponseFormat    string        `yaml:"response_format"`
	// Temperature is sent with every call; a negative value sends none, for
	// models that accept only their default.
	Temperature *float64 `yaml:"temperature"`
	Seed        *int     `yaml:"seed"`
	// MaxTokens caps each answer (sent as max_tokens); 0 sends no cap.
	MaxTokens int                    `yaml:"max_tokens"`
	Render    RenderOptions          `yaml:"render"`
	Models    map[string]ModelConfig `yaml:"models"`
}

// ModelConfig describes one model: its context window, the room kept for
// its answer, the vocabulary its tokens are estimated with, and its price.
type ModelConfig struct {
	Context       int    `yaml:"context"`
	OutputReserve int    `yaml:"output_reserve"`
	Encoding      string `yaml:"encoding"`
	Price         *Price `yaml:"price"`
}

// DefaultConfigFile is read when present and no other file is named.
const DefaultConfigFile = "faultline.yaml"

// LoadConfig reads the judge section of a configuration file. Other
// top-level sections belong to other commands and are left alone; unknown
// keys inside the judge section are errors, so a typo does not silently
// fall back to a default.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var top map[string]yaml.Node
	if err := yaml.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	cfg := &Config{}
	node, ok := top["judge"]
	if !ok {
		return cfg, nil
	}
	// Re-encode the section so it can be decoded strictly.
	section, err := yaml.Marshal(&node)
	if err != nil {
		return nil, fmt.Errorf("config %s: judge: %w", path, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(section))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config %s: judge: %w", path, err)
	}
	return cfg, nil
}

// ModelSettings returns the settings for a model, defaults filled in.
func (c *Config) ModelSettings(name string) ModelConfig {
	m := c.Models[name]
	if m.Context <= 0 {
		m.Context = DefaultBudget.Context
	}
	if m.OutputReserve <= 0 {
		m.OutputReserve = DefaultBudget.Output
	}
	if m.Encoding == "" {
		m.Encoding = DefaultEncoding
	}
	return m
}

// RenderLimits returns the render limits, defaults filling what is unset.
func (c *Config) RenderLimits() RenderOptions {
	r := c.Render
	if r.OutputChars <= 0 {
		r.OutputChars = DefaultRender.OutputChars
	}
	if r.TextChars <= 0 {
		r.TextChars = DefaultRender.TextChars
	}
	if r.TaskChars <= 0 {
		r.TaskChars = DefaultRender.TaskChars
	}
	return r
}
