package taxonomy

import (
	"strings"
	"testing"
)

func TestSystemTaxonomy(t *testing.T) {
	if System.Version != SystemVersion {
		t.Fatalf("version = %q, want %q", System.Version, SystemVersion)
	}
	if len(System.Modes) < 4 {
		t.Fatalf("got %d system modes, want at least 4", len(System.Modes))
	}
	for i, m := range System.Modes {
		if want := "SYS-" + string(rune('1'+i)); m.Code != want {
			t.Errorf("mode %d has code %s, want %s", i, m.Code, want)
		}
		if m.Category != "SYS" || len(m.Definition) < 60 || m.Name == "" {
			t.Errorf("%s is incomplete: %+v", m.Code, m)
		}
		if _, ok := MAST.Mode(m.Code); ok {
			t.Errorf("%s is also a MAST code", m.Code)
		}
		if got := System.MapLabel(m.Name); got.Code != m.Code {
			t.Errorf("MapLabel(%q) = %q, want %s", m.Name, got.Code, m.Code)
		}
	}
	// No system mode may be mistaken for a MAST mode by its name.
	for _, m := range System.Modes {
		if got := MAST.MapLabel(m.Name); got.Code != "" {
			t.Errorf("MAST maps system mode name %q to %s", m.Name, got.Code)
		}
	}
}

func TestIsMASTAndLookup(t *testing.T) {
	tests := []struct {
		code    string
		mast    bool
		version string
		name    string
	}{
		{"FM-1.3", true, Version, "Step repetition"},
		{"3.3", true, Version, "Incorrect verification"},
		{"SYS-1", false, SystemVersion, "Empty model response"},
		{"SYS-4", false, SystemVersion, "Context overflow"},
		{"SYS-9", false, "", ""},
		{"", false, "", ""},
		{"FM-9.9", false, "", ""},
	}
	for _, tt := range tests {
		if got := IsMAST(tt.code); got != tt.mast {
			t.Errorf("IsMAST(%q) = %v, want %v", tt.code, got, tt.mast)
		}
		m, version, ok := Lookup(tt.code)
		if ok != (tt.version != "") || version != tt.version || (ok && !strings.EqualFold(m.Name, tt.name)) {
			t.Errorf("Lookup(%q) = %v %q %v, want %q %q", tt.code, m, version, ok, tt.name, tt.version)
		}
	}
}
