package taxonomy

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/faultline/faultline/internal/shared"
)

func TestEmbeddedTaxonomyIsComplete(t *testing.T) {
	if MAST.Version != Version {
		t.Fatalf("version = %q, want %q", MAST.Version, Version)
	}
	if len(MAST.Modes) != 14 {
		t.Fatalf("got %d modes, want 14", len(MAST.Modes))
	}
	stages := map[string]bool{"pre": true, "exec": true, "post": true}
	for _, m := range MAST.Modes {
		if !stages[m.Stage] {
			t.Errorf("%s: stage %q", m.Code, m.Stage)
		}
		if !strings.HasPrefix(m.Code, "FM-"+m.Category[2:]+".") {
			t.Errorf("%s: category %s does not match code", m.Code, m.Category)
		}
		if len(m.Definition) < 60 {
			t.Errorf("%s: definition too short", m.Code)
		}
	}
	// The 3.2/3.3 rule must be written into both definitions.
	m32, _ := MAST.Mode("3.2")
	m33, _ := MAST.Mode("FM-3.3")
	if !strings.Contains(m32.Definition, "FM-3.3") || !strings.Contains(m33.Definition, "FM-3.2") {
		t.Error("3.2 and 3.3 definitions must each point at the other")
	}
}

func TestCanonicalCode(t *testing.T) {
	for in, want := range map[string]string{"1.3": "FM-1.3", "fm-2.6": "FM-2.6", "FM3.3": "FM-3.3", " 1.10 ": "FM-1.10", "other": "other"} {
		if got := CanonicalCode(in); got != want {
			t.Errorf("CanonicalCode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMapLabel(t *testing.T) {
	tests := []struct {
		label   string
		code    string
		dropped bool
	}{
		{"1.5 Unaware of stopping conditions\n\nLack of recognition…", "FM-1.5", false},
		{"1.3 Unaware of stopping conditions", "FM-1.5", false}, // round 2/3 numbering
		{"2.2 Step repetition", "FM-1.3", false},
		{"1.5 Step repetition\n", "FM-1.3", false},
		{"2.6 Disobey role specification", "FM-1.2", false},
		{"1.2 Disobey Role Specification \n\n\nFailure", "FM-1.2", false},
		{"4.3 Lack of critical verification\n(system designed to but agents didn't)", "FM-3.2", false},
		{"3.3 Lack of result verification", "FM-3.3", false},
		{"2.4 Information Witholding", "FM-2.4", false},
		{"2.5 Ignored Other Agents' Input", "FM-2.5", false},
		{"2.5 Ignored Other Agents’ Input", "FM-2.5", false},
		{"2.6 Reasoning-Action Mismatch\n\nInconsistency between reasoning and action", "FM-2.6", false},
		{"3.1 Disagreement induced inaction", "", true},
		{"3.4 Waiting for known information\n\nInefficient idling", "", true},
		{"9.9 Something new", "", false},
		// Names that swapped meaning between sources are never guessed.
		{"Weak Verification", "", false},
		{"No or Incorrect Verification", "", false},
	}
	for _, tt := range tests {
		got := MAST.MapLabel(tt.label)
		if got.Code != tt.code || got.Dropped != tt.dropped {
			t.Errorf("MapLabel(%q) = %+v, want code %q dropped %v", tt.label, got, tt.code, tt.dropped)
		}
	}
}

// TestMapsEveryDraftName checks the remap against the shared notes, which list
// every name each mode has had in each source.
func TestMapsEveryDraftName(t *testing.T) {
	data, err := os.ReadFile(shared.Notes(t, "mast_taxonomy.json"))
	if err != nil {
		t.Fatal(err)
	}
	var notes struct {
		Modes []struct {
			Code  string            `json:"code"`
			Names map[string]string `json:"names"`
		} `json:"modes"`
	}
	if err := json.Unmarshal(data, &notes); err != nil {
		t.Fatal(err)
	}
	for _, m := range notes.Modes {
		for _, src := range []string{"paper", "round1_draft", "round2_3_draft"} {
			name := m.Names[src]
			name, _, _ = strings.Cut(name, " (")
			if got := MAST.MapLabel(name); got.Code != "FM-"+m.Code {
				t.Errorf("%s name %q maps to %q, want FM-%s", src, name, got.Code, m.Code)
			}
		}
	}
}
