package web

import "testing"

func TestLocalPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/traces/a?queue=x", "/traces/a?queue=x"},
		{"/traces/a%2Fb#label-panel", "/traces/a%2Fb"},
		{"//evil.example/x", "/labels"},
		{"https://evil.example/", "/labels"},
		{"/\\evil.example", "/%5Cevil.example"},
		{"labels", "/labels"},
		{"", "/labels"},
		{"%zz", "/labels"},
	} {
		if got := localPath(tc.in); got != tc.want {
			t.Errorf("localPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
