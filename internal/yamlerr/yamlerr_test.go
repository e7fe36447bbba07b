package yamlerr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestLocated(t *testing.T) {
	tests := []struct{ err, want string }{
		{"yaml: line 3: did not find expected key", "f.yaml:3: did not find expected key"},
		{"line 12: cannot unmarshal !!str", "f.yaml:12: cannot unmarshal !!str"},
		{"yaml: control characters are not allowed", "f.yaml: control characters are not allowed"},
	}
	for _, tt := range tests {
		if got := Located("f.yaml", errors.New(tt.err)).Error(); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestFields(t *testing.T) {
	fail := func(n *yaml.Node, format string, args ...any) error {
		return fmt.Errorf("line %d: %s", n.Line, fmt.Sprintf(format, args...))
	}
	walk := func(src string) (string, error) {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
			t.Fatal(err)
		}
		var keys []string
		err := Fields(doc.Content[0], "the file", fail, func(key string, k, v *yaml.Node) error {
			keys = append(keys, key+"@"+strconv.Itoa(k.Line)+"="+v.Value)
			return nil
		})
		return strings.Join(keys, " "), err
	}
	if got, err := walk("b: 1\na: 2\n"); err != nil || got != "b@1=1 a@2=2" {
		t.Errorf("fields %q, %v", got, err)
	}
	if _, err := walk("a: 1\nb: 2\na: 3\n"); err == nil || err.Error() != `line 3: "a" is given twice` {
		t.Errorf("a key given twice: %v", err)
	}
	if _, err := walk("- a\n"); err == nil || err.Error() != "line 1: the file must be a mapping of fields" {
		t.Errorf("a list: %v", err)
	}
}
