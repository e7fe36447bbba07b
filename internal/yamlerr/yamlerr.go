// Package yamlerr places a YAML syntax error in its file, as every settings
// and policy file reader reports its mistakes: path:line: what is wrong.
package yamlerr

import (
	"fmt"
	"regexp"
	"strings"
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
