package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/store"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name, text string
		models     store.ModelAliases
		err        string // what the error says after the file's name
	}{
		{"aliases", "judge:\n  model: x\nmodels:\n  openai/gpt-oss-120b-fp8: gpt-oss-120b\n  gpt-oss: gpt-oss-120b\n",
			store.ModelAliases{"openai/gpt-oss-120b-fp8": "gpt-oss-120b", "gpt-oss": "gpt-oss-120b"}, ""},
		{"empty file", "", nil, ""},
		{"empty section", "models:\n", nil, ""},
		{"other sections left to their commands", "other_command:\n  key: 1\n", nil, ""},
		{"an alias of its own name", "models:\n  a: a\n", store.ModelAliases{"a": "a"}, ""},
		{"bad YAML", "models:\n  a: b\n   c: d\n", nil, ":3: "},
		{"a tab", "models:\n\ta: b\n", nil, ":2: "},
		{"a list for a name", "models:\n  a: b\n  c: [d]\n", nil, ":3: models: c: the canonical name must be a non-empty string"},
		{"an empty name", "models:\n  a:\n", nil, ":2: models: a: the canonical name must be a non-empty string"},
		{"not a mapping", "models:\n  - a\n", nil, ":2: models: a mapping of model names"},
		{"given twice", "models:\n  a: b\n  a: c\n", nil, ":3: models: a is given twice (first on line 2)"},
		{"a chain", "models:\n  a: b\n  b: c\n", nil, ":2: models: a names b, which is itself an alias of c"},
		{"not sections", "- a\n", nil, ":1: the file must be a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "faultline.yaml")
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := Load(path)
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), path+tt.err) {
					t.Fatalf("err %v, want %q", err, path+tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Models) != len(tt.models) {
				t.Fatalf("models %v, want %v", f.Models, tt.models)
			}
			for k, v := range tt.models {
				if f.Models[k] != v {
					t.Errorf("models[%q] = %q, want %q", k, f.Models[k], v)
				}
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "none.yaml")); err == nil || !strings.Contains(err.Error(), "none.yaml") {
		t.Errorf("a missing file: %v", err)
	}
	if f, err := Load(""); err != nil || f.Models != nil {
		t.Errorf("no file: %v %v", f, err)
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if got, err := Find(""); got != "" || err != nil {
		t.Errorf("no file: %q %v", got, err)
	}
	if got, _ := Find("other.yaml"); got != "other.yaml" {
		t.Errorf("named: %q", got)
	}
	if err := os.WriteFile(DefaultFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := Find(""); got != DefaultFile {
		t.Errorf("in the working directory: %q", got)
	}
}
