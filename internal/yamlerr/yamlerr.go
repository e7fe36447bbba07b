// Package yamlerr places a YAML syntax error in its file, as every settings
// and policy file reader reports its mistakes: path:line: what is wrong,
// and walks a mapping's fields as those readers do.
package yamlerr

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// yamlLine is how yaml.v3 places an error: "yaml: line 3: ..." (or "line 3:"
// in a list of unmarshal errors).
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// Located rewrites a YAML error as path:line: message, or path: message
// when the error names no line.
func Located(path string, err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%s:%s: %s", path, m[1], m[2])
	}
	return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
}

// Fields calls fn with each key of a mapping node, its key node and its
// value, in order. A node that is not a mapping (what names it) and a key
// given twice are refused with the error fail makes at the node.
func Fields(n *yaml.Node, what string, fail func(n *yaml.Node, format string, args ...any) error, fn func(key string, k, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return fail(n, "%s must be a mapping of fields", what)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if seen[k.Value] {
			return fail(k, "%q is given twice", k.Value)
		}
		seen[k.Value] = true
		if err := fn(k.Value, k, n.Content[i+1]); err != nil {
			return err
		}
	}
	return nil
}
