// Package config reads faultline.yaml, the settings file commands share:
// its models section, the alias table of model names, here; its judge
// section in internal/judge.
package config

import (
	"errors"
	"fmt"
	"os"
	"sort"

	"gopkg.in/yaml.v3"

	"github.com/faultline/faultline/internal/yamlerr"

	"github.com/faultline/faultline/internal/store"
)

// DefaultFile is read from the working directory when present and no other
// file is named.
const DefaultFile = "faultline.yaml"

// File is what the commands other than judge read from the file.
type File struct {
	Path string
	// Models maps model names as traces write them to canonical names:
	//
	//	models:
	//	  gpt-oss-120b-fp8: gpt-oss-120b
	//	  meta-llama/Llama-3.1-8B-Instruct: llama-3.1-8b-instruct
	Models store.ModelAliases
}

// Find names the file to read: path when given, else DefaultFile when the
// working directory holds one, else "" (no file: built-in rules only).
func Find(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	switch _, err := os.Stat(DefaultFile); {
	case err == nil:
		return DefaultFile, nil
	case errors.Is(err, os.ErrNotExist):
		return "", nil
	default:
		return "", fmt.Errorf("config: %w", err)
	}
}

// Load reads a settings file; an empty path gives an empty File. A mistake
// is reported as path:line: what is wrong.
func Load(path string) (*File, error) {
	f := &File{Path: path}
	if path == "" {
		return f, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlerr.Located(path, err)
	}
	if len(doc.Content) == 0 {
		return f, nil // an empty file
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: the file must be a mapping of sections (models, judge)", path, top.Line)
	}
	// Other sections belong to other commands (judge reads its own).
	for i := 0; i+1 < len(top.Content); i += 2 {
		if key, value := top.Content[i], top.Content[i+1]; key.Value == "models" {
			if f.Models, err = aliases(path, value); err != nil {
				return nil, err
			}
		}
	}
	return f, nil
}

// aliases reads the models section: a mapping of names to canonical names.
func aliases(path string, n *yaml.Node) (store.ModelAliases, error) {
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		return nil, nil
	case n.Kind != yaml.MappingNode:
		return nil, fmt.Errorf("%s:%d: models: a mapping of model names as written to canonical names (openai/gpt-oss-120b: gpt-oss-120b)", path, n.Line)
	}
	out := store.ModelAliases{}
	lines := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		if key.Kind != yaml.ScalarNode || key.Value == "" {
			return nil, fmt.Errorf("%s:%d: models: a model name must be a non-empty string", path, key.Line)
		}
		if value.Kind != yaml.ScalarNode || value.Value == "" || value.Tag == "!!null" {
			return nil, fmt.Errorf("%s:%d: models: %s: the canonical name must be a non-empty string", path, value.Line, key.Value)
		}
		// A node tree keeps a key given twice, as decoding into a map
		// would not.
		if first, ok := lines[key.Value]; ok {
			return nil, fmt.Errorf("%s:%d: models: %s is given twice (first on line %d)", path, key.Line, key.Value, first)
		}
		lines[key.Value] = key.Line
		out[key.Value] = value.Value
	}
	// A chain (a: b, b: c) would name a model differently depending on the
	// spelling it is found under: refused rather than guessed.
	var names []string
	for k := range out {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if to, ok := out[out[k]]; ok && out[k] != k && to != out[k] {
			return nil, fmt.Errorf("%s:%d: models: %s names %s, which is itself an alias of %s: name %s directly", path, lines[k], k, out[k], to, to)
		}
	}
	return out, nil
}
