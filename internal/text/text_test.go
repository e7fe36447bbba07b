package text

import "testing"

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"shell", "shell", 0}, {"shel", "shell", 1}, {"kubectl", "kubect1", 1},
		{"", "abc", 3}, {"flaw", "lawn", 2}, {"héllo", "hello", 1},
	} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestHead(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 3, "hel"}, {"hello", 5, "hello"}, {"hello", 9, "hello"}, {"héllo", 2, "hé"}, {"abc", 0, ""},
	} {
		if got := Head(tt.s, tt.n); got != tt.want {
			t.Errorf("Head(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func TestRegexp(t *testing.T) {
	quoted := Regexp(`"([^"\n]{3,5})"`)
	if a, b := quoted(), quoted(); a != b {
		t.Error("a second call compiled the pattern again")
	}
	if got := quoted().FindStringSubmatch(`say "abcd" now`); len(got) != 2 || got[1] != "abcd" {
		t.Errorf("match = %q", got)
	}
	for _, bad := range []string{`(`, `a{2,1}`, `x{1001}`, `[z-a]`} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Regexp(%q) did not panic at once", bad)
				}
			}()
			Regexp(bad)
		}()
	}
}
