package detect

import "github.com/faultline/faultline/taxonomy"

// ModeEntry is one failure mode with what faultline knows of it besides
// its definition: the taxonomy it belongs to, its category's name, the
// intervention that addresses it and the detectors that look for it.
// `faultline modes` and the web UI's modes pages both show it.
type ModeEntry struct {
	Taxonomy     *taxonomy.Taxonomy
	Mode         *taxonomy.Mode
	CategoryName string
	Intervention taxonomy.Intervention // zero when the taxonomy names none
	Detectors    []*Detector           // of All, in their order
}

// Catalog lists MAST's modes, then the system modes, in taxonomy order.
func Catalog() []ModeEntry {
	var out []ModeEntry
	for _, tx := range []*taxonomy.Taxonomy{taxonomy.MAST, taxonomy.System} {
		categories := map[string]string{}
		for _, c := range tx.Categories {
			categories[c.ID] = c.Name
		}
		for i := range tx.Modes {
			m := &tx.Modes[i]
			e := ModeEntry{Taxonomy: tx, Mode: m, CategoryName: categories[m.Category]}
			if iv, ok := tx.Intervention(m.Intervention); ok {
				e.Intervention = *iv
			}
			for _, d := range All {
				if d.Mode == m.Code {
					e.Detectors = append(e.Detectors, d)
				}
			}
			out = append(out, e)
		}
	}
	return out
}
