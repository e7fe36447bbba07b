package yamlerr

import (
	"errors"
	"testing"
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
