package labels

import (
	"strings"
	"testing"
)

func TestHumanSource(t *testing.T) {
	tests := []struct {
		name, want string
	}{
		{"ana", "human:ana"},
		{"rater_2.b-x", "human:rater_2.b-x"},
		{"Zoë", "human:Zoë"},
		{strings.Repeat("ä", 40), "human:" + strings.Repeat("ä", 40)}, // forty runes, eighty bytes
		{strings.Repeat("a", 41), ""},
		{"", ""},
		{"two words", ""},
		{"a/b", ""},
		{"a:b", ""},
	}
	for _, tt := range tests {
		got, err := HumanSource(tt.name)
		if (err != nil) != (tt.want == "") || got != tt.want {
			t.Errorf("HumanSource(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}
