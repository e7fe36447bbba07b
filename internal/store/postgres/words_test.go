package postgres

import (
	"slices"
	"testing"
)

// TestWords holds the index's words to FTS5's: letters and digits, lower
// case, accents off; a run of combining marks alone is no word (a real
// rollout holds one, and an empty lexeme is a tsvector syntax error).
func TestWords(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"Café au lait", []string{"cafe", "au", "lait"}},
		{"kubectl get pods -n otel-demo", []string{"kubectl", "get", "pods", "n", "otel", "demo"}},
		{"a \u0301\u0302 b", []string{"a", "b"}},
		{"\u0301", nil},
		{"", nil},
	} {
		if got := words(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.text, got, tc.want)
		}
		for _, l := range searchVector(tc.text).Lexemes {
			if l.Word == "" {
				t.Errorf("%q: an empty lexeme in %v", tc.text, searchVector(tc.text))
			}
		}
	}
}
