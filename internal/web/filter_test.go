package web

import (
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/faultline/faultline/internal/store"
)

func TestCanonicalModels(t *testing.T) {
	tests := []struct {
		in      []string
		aliases store.ModelAliases
		want    []string
	}{
		{[]string{"gpt-oss-120b", "openai/gpt-oss-120b", "watsonx/openai/gpt-oss-120b", "gemini-2.5-flash"}, nil, []string{"gemini-2.5-flash", "gpt-oss-120b"}},
		// faultline.yaml's aliases, as serve passes them.
		{[]string{"gpt-oss-120b", "my-gpt-oss", "gemini-2.5-flash"}, store.ModelAliases{"my-gpt-oss": "gpt-oss-120b"}, []string{"gemini-2.5-flash", "gpt-oss-120b"}},
		{[]string{""}, nil, []string{""}},
		{nil, nil, nil}, // too many to offer: typed in
	}
	for _, tt := range tests {
		if got := canonicalModels(tt.in, tt.aliases); !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
			t.Errorf("canonicalModels(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestFilterParams: the address names the filters as the command line's
// flags do, and the older names are still read.
func TestFilterParams(t *testing.T) {
	tests := []struct{ query, format, search, encoded string }{
		{"trace-format=codex&search=oom", "codex", "oom", "search=oom&trace-format=codex"},
		{"format=codex&q=oom", "codex", "oom", "search=oom&trace-format=codex"},
		{"trace-format=mad&format=codex&search=a&q=b", "mad", "a", "search=a&trace-format=mad"},
	}
	for _, tt := range tests {
		f, err := parseFilter(httptest.NewRequest("GET", "/traces?"+tt.query, nil))
		if err != nil {
			t.Fatal(err)
		}
		if f.Format != tt.format || f.Search != tt.search || f.encode() != tt.encoded {
			t.Errorf("%s: format %q, search %q, encoded %q", tt.query, f.Format, f.Search, f.encode())
		}
	}
}
