package judge

import (
	"context"
	"strings"
	"testing"
)

func TestPreflight(t *testing.T) {
	for _, tc := range []struct {
		name, url, key, want string
	}{
		{"local without key", "http://127.0.0.1:8080/v1", "", ""},
		{"localhost without key", "http://localhost:11434/v1", "", ""},
		{"private address without key", "http://10.1.2.3:8000/v1", "", ""},
		{"public address without key", "https://203.0.113.7/v1", "", "no API key for the judge endpoint 203.0.113.7: set OPENAI_API_KEY"},
		{"public address with key", "https://203.0.113.7/v1", "k", ""},
		{"unresolvable host", "https://api.example.invalid/v1", "k", "api.example.invalid does not resolve"},
		{"unresolvable host without key", "https://api.example.invalid/v1", "", "no API key is set either: set OPENAI_API_KEY"},
		{"not a URL", "api.openai.com", "k", "is not an http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Preflight(context.Background(), tc.url, tc.key, "OPENAI_API_KEY")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
