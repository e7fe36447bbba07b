package detect

import (
	"testing"

	"github.com/faultline/faultline/taxonomy"
)

// The catalog holds every mode of both taxonomies once, in order, and
// every detector under the mode it looks for.
func TestCatalog(t *testing.T) {
	entries := Catalog()
	if want := len(taxonomy.MAST.Modes) + len(taxonomy.System.Modes); len(entries) != want {
		t.Fatalf("%d entries, want %d", len(entries), want)
	}
	if entries[0].Mode.Code != "FM-1.1" || entries[0].Taxonomy != taxonomy.MAST || entries[len(entries)-1].Taxonomy != taxonomy.System {
		t.Errorf("order: first %s, last %s", entries[0].Mode.Code, entries[len(entries)-1].Mode.Code)
	}
	listed := map[*Detector]int{}
	for _, e := range entries {
		if e.CategoryName == "" {
			t.Errorf("%s: no category name", e.Mode.Code)
		}
		for _, d := range e.Detectors {
			listed[d]++
			if d.Mode != e.Mode.Code {
				t.Errorf("%s listed under %s", d.Name, e.Mode.Code)
			}
		}
	}
	for _, d := range All {
		if listed[d] != 1 {
			t.Errorf("detector %s listed %d times", d.Name, listed[d])
		}
	}
}
