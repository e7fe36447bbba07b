package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/faultline/faultline/detect"
	"github.com/faultline/faultline/taxonomy"
)

// modeInfo is one failure mode as the modes pages show it: what
// `faultline modes CODE` prints, from the same taxonomy and detectors.
type modeInfo struct {
	Code, Name   string
	Taxonomy     string // the taxonomy's version: MAST or faultline's system modes
	Category     string
	CategoryName string
	Stage        string
	Definition   string
	Example      string
	Detectors    []*detect.Detector
	Intervention taxonomy.Intervention
}

// modeGroup is one taxonomy's modes, under its own heading.
type modeGroup struct {
	Version string
	About   string
	Modes   []modeInfo
}

// modeGroups lists MAST's modes, then the system modes, each with its
// detectors and the intervention that addresses it. Built once: the
// taxonomy and the detectors are compiled in.
var modeGroups = func() []modeGroup {
	var out []modeGroup
	for _, e := range detect.Catalog() {
		if len(out) == 0 || out[len(out)-1].Version != e.Taxonomy.Version {
			out = append(out, modeGroup{Version: e.Taxonomy.Version, About: e.Taxonomy.About})
		}
		m := e.Mode
		g := &out[len(out)-1]
		g.Modes = append(g.Modes, modeInfo{Code: m.Code, Name: m.Name, Taxonomy: e.Taxonomy.Version, Category: m.Category,
			CategoryName: e.CategoryName, Stage: m.Stage, Definition: m.Definition, Example: m.Example,
			Detectors: e.Detectors, Intervention: e.Intervention})
	}
	return out
}()

// modesView is the modes page: every mode, or one.
type modesView struct {
	Groups []modeGroup
	One    *modeInfo
}

// modesPage lists every mode the UI can show.
func (s *Server) modesPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "modes", "", view{Title: "Failure modes", Nav: "modes", Body: modesView{Groups: modeGroups}})
}

// modePage explains one mode. A code in another spelling ("1.3",
// "fm-1.3") is sent to its canonical address, so that every mode has one.
func (s *Server) modePage(w http.ResponseWriter, r *http.Request) {
	raw := r.PathValue("code")
	code := strings.ToUpper(taxonomy.CanonicalCode(strings.TrimSpace(raw)))
	for _, g := range modeGroups {
		for i := range g.Modes {
			m := &g.Modes[i]
			if m.Code != code {
				continue
			}
			if raw != code {
				http.Redirect(w, r, modeURL(code), http.StatusMovedPermanently)
				return
			}
			s.render(w, r, http.StatusOK, "modes", "", view{Title: m.Code + " " + m.Name, Nav: "modes", Body: modesView{One: m}})
			return
		}
	}
	s.message(w, r, http.StatusNotFound, "No such mode", "There is no mode "+raw+": the codes are FM-1.1 to FM-3.3 and SYS-1 onwards, listed under Modes.")
}

// modeURL is the address of a mode's page; "" for a finding whose mode is
// unknown (a label kept as written), which has no page.
func modeURL(code string) string {
	if _, _, ok := taxonomy.Lookup(code); !ok {
		return ""
	}
	return "/modes/" + url.PathEscape(code)
}
