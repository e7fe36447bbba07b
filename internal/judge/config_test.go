package judge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "faultline.yaml")
	os.WriteFile(path, []byte(`
serve: {port: 8080}
judge:
  model: llama3.1:8b
  base_url: http://localhost:11434/v1
  timeout: 90s
  retries: 0
  temperature: -1
  render: {output_chars: 1000}
  models:
    llama3.1:8b: {context: 32768, output_reserve: 4096, encoding: cl100k_base}
    gpt-4.1-mini: {price: {input: 0.4, output: 1.6}}
`), 0o644)
	cfg, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model != "llama3.1:8b" || cfg.Timeout != 90*time.Second || cfg.Retries == nil || *cfg.Retries != 0 || *cfg.Temperature != -1 {
		t.Errorf("config %+v", cfg)
	}
	if m := cfg.ModelSettings("llama3.1:8b"); m.Context != 32768 || m.OutputReserve != 4096 || m.Encoding != "cl100k_base" || m.Price != nil {
		t.Errorf("llama settings %+v", m)
	}
	if m := cfg.ModelSettings("gpt-4.1-mini"); m.Context != DefaultBudget.Context || m.Encoding != DefaultEncoding || m.Price.Output != 1.6 {
		t.Errorf("gpt settings %+v", m)
	}
	if r := cfg.RenderLimits(); r.OutputChars != 1000 || r.TextChars != DefaultRender.TextChars {
		t.Errorf("render %+v", r)
	}
	os.WriteFile(path, []byte("judge:\n  models:\n    m: {contxt: 5}\n"), 0o644)
	if _, err := LoadConfig(path); err == nil || !strings.Contains(err.Error(), "field contxt not found") {
		t.Errorf("err = %v", err)
	}
	if _, err := NewTokenizer("no_such_base"); err == nil || !strings.Contains(err.Error(), "known: o200k_base") {
		t.Errorf("err = %v", err)
	}
}
