package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/faultline/faultline/internal/yamlerr"
)

// AppendRule adds a rule at the end of the rules list of the file at path,
// creating the file or the section when missing. The rest of the file, its
// comments included, is kept: the rule is added to the file's YAML tree,
// not to its text. A rule whose name the file already uses is refused, and
// the result's codes and rules must load before it replaces the file, which
// it does atomically (a temporary file renamed over it). Sections other than
// codes and rules are left as they are (the file may be faultline.yaml,
// whose other sections are other commands').
func AppendRule(path string, sp Spec) error {
	data, err := os.ReadFile(path)
	mode := fs.FileMode(0o644)
	switch {
	case err == nil:
		if info, err := os.Stat(path); err == nil {
			mode = info.Mode().Perm()
		}
	case errors.Is(err, fs.ErrNotExist):
		data = nil
	default:
		return fmt.Errorf("rules: %w", err)
	}
	out, err := appendRule(path, data, sp)
	if err != nil {
		return err
	}
	return writeAtomic(path, out, mode)
}

// appendRule returns data with sp added to its rules, checked by parsing.
// The rule is added to the file's YAML tree, which is written out again:
// that keeps the comments but not every detail of layout (blank lines,
// folded text). So when the rules list ends the file, the rule's text is
// appended to the file's own text instead, and kept when it reads as the
// tree does.
func appendRule(path string, data []byte, sp Spec) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("rules: cannot add rule %s: %w", sp.Name, yamlerr.Located(path, err))
	}
	var buf bytes.Buffer
	splice := -1 // the rules list's indentation when the rule's text can be appended
	if len(doc.Content) == 0 {
		// An empty file, or one of comments only: the parser keeps no node
		// for the comments, so their text is kept as it is, ahead of the
		// new section.
		buf.Write(data)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			buf.WriteByte('\n')
		}
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	top := doc.Content[0]
	if isNull(top) {
		// A file of comments only: keep them on the new mapping.
		top.Kind, top.Tag, top.Value = yaml.MappingNode, "", ""
	}
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: cannot add rule %s: the file is not a mapping of sections", path, top.Line, sp.Name)
	}
	var list *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "rules" {
			list = top.Content[i+1]
		}
	}
	if n := len(top.Content); n >= 2 && top.Style&yaml.FlowStyle == 0 && top.Column == 1 {
		switch last := top.Content[n-1]; {
		case list == nil:
			splice = 0
		case top.Content[n-2].Value == "rules" && last.Kind == yaml.SequenceNode && last.Style&yaml.FlowStyle == 0 && len(last.Content) > 0:
			splice = last.Column - 1
		}
	}
	switch {
	case list == nil:
		list = &yaml.Node{Kind: yaml.SequenceNode}
		top.Content = append(top.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "rules"}, list)
	case isNull(list):
		list.Kind, list.Tag, list.Value = yaml.SequenceNode, "", ""
	case list.Kind != yaml.SequenceNode:
		return nil, fmt.Errorf("%s:%d: cannot add rule %s: rules is not a list", path, list.Line, sp.Name)
	}
	for _, r := range list.Content {
		if r.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(r.Content); i += 2 {
			if r.Content[i].Value == "name" && r.Content[i+1].Value == sp.Name {
				return nil, fmt.Errorf("%s:%d: cannot add rule %s: the file has a rule of that name", path, r.Line, sp.Name)
			}
		}
	}
	var rule yaml.Node
	if err := rule.Encode(sp); err != nil {
		return nil, fmt.Errorf("rules: cannot add rule %s: %w", sp.Name, err)
	}
	list.Content = append(list.Content, &rule)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("rules: cannot add rule %s: %w", sp.Name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("rules: cannot add rule %s: %w", sp.Name, err)
	}
	want, err := parseRules(path, buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("rules: rule %s would make the file invalid: %w", sp.Name, err)
	}
	if splice >= 0 {
		if text, ok := appendText(path, data, sp, splice, want.Hash); ok {
			return text, nil
		}
	}
	return buf.Bytes(), nil
}

// appendText appends the rule's text to data, as an item of a rules list
// indented by indent spaces that ends the file, or of a new rules section
// when indent is 0. It reports whether the result reads as the set whose
// hash is want.
func appendText(path string, data []byte, sp Spec, indent int, want string) ([]byte, bool) {
	var item bytes.Buffer
	enc := yaml.NewEncoder(&item)
	enc.SetIndent(2)
	if err := enc.Encode([]Spec{sp}); err != nil || enc.Close() != nil {
		return nil, false
	}
	out := bytes.Clone(data)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	pad := "  "
	if indent == 0 {
		out = append(out, "rules:\n"...)
	} else {
		pad = strings.Repeat(" ", indent)
	}
	for _, line := range strings.SplitAfter(item.String(), "\n") {
		if line != "" {
			out = append(out, pad+line...)
		}
	}
	got, err := parseRules(path, out)
	return out, err == nil && got.Hash == want
}

// parseRules reads the codes and rules of a file, leaving its other
// sections to whoever reads them.
func parseRules(path string, data []byte) (*Set, error) {
	return parse(&parser{path: path, settings: true}, data)
}

// writeAtomic replaces path with data through a temporary file in the same
// directory, so a reader sees the old file or the new one, never a part.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("rules: %w", err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("rules: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	return nil
}
