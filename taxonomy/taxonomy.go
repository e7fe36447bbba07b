// Package taxonomy holds MAST, the failure-mode taxonomy faultline annotates
// with, as embedded data: codes, names, categories, stages, definitions and the
// intervention that addresses each mode. It also maps the labels of older
// drafts and other sources onto the final codes, by the mode's text.
package taxonomy

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

//go:embed mast-v3.json
var mastV3 []byte

// Version is the taxonomy version every annotation records.
const Version = "mast-v3"

// Mode is one failure mode.
type Mode struct {
	Code         string   `json:"code"` // FM-1.1 … FM-3.3
	Name         string   `json:"name"`
	Category     string   `json:"category"` // FC1, FC2, FC3
	Stage        string   `json:"stage"`    // pre, exec, post
	Definition   string   `json:"definition"`
	Example      string   `json:"example"`      // a short made-up run showing it, for people learning the modes
	Intervention string   `json:"intervention"` // an Intervention ID
	Aliases      []string `json:"aliases"`      // names this mode has had, for remapping
}

// Category groups modes.
type Category struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Summary string `json:"summary"`
}

// Intervention is a system-level fix that addresses one or more modes.
type Intervention struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Taxonomy is a versioned set of modes.
type Taxonomy struct {
	Version       string         `json:"version"`
	About         string         `json:"about"`
	Categories    []Category     `json:"categories"`
	Interventions []Intervention `json:"interventions"`
	Modes         []Mode         `json:"modes"`
	Dropped       []string       `json:"dropped"` // draft modes with no successor

	byCode  map[string]*Mode
	byAlias map[string]string
}

// MAST is the taxonomy faultline uses, loaded once from embedded data.
var MAST = mustLoad(mastV3)

func mustLoad(data []byte) *Taxonomy {
	t, err := load(data)
	if err != nil {
		panic(fmt.Sprintf("taxonomy: embedded data is broken: %v", err))
	}
	return t
}

func load(data []byte) (*Taxonomy, error) {
	var t Taxonomy
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, err
	}
	t.byCode = map[string]*Mode{}
	t.byAlias = map[string]string{}
	interventions := map[string]bool{}
	for _, iv := range t.Interventions {
		interventions[iv.ID] = true
	}
	for i := range t.Modes {
		m := &t.Modes[i]
		if _, dup := t.byCode[m.Code]; dup {
			return nil, fmt.Errorf("mode %s listed twice", m.Code)
		}
		if !interventions[m.Intervention] {
			return nil, fmt.Errorf("mode %s names unknown intervention %q", m.Code, m.Intervention)
		}
		t.byCode[m.Code] = m
		for _, a := range append([]string{m.Name}, m.Aliases...) {
			key := normalizeLabel(a)
			if prev, ok := t.byAlias[key]; ok && prev != m.Code {
				return nil, fmt.Errorf("alias %q names both %s and %s", a, prev, m.Code)
			}
			t.byAlias[key] = m.Code
		}
	}
	return &t, nil
}

// Mode returns the mode with the given code. Codes are accepted with or
// without the FM- prefix.
func (t *Taxonomy) Mode(code string) (*Mode, bool) {
	m, ok := t.byCode[CanonicalCode(code)]
	return m, ok
}

// Intervention returns the intervention with the given id.
func (t *Taxonomy) Intervention(id string) (*Intervention, bool) {
	for i := range t.Interventions {
		if t.Interventions[i].ID == id {
			return &t.Interventions[i], true
		}
	}
	return nil, false
}

// CanonicalCode turns "1.3", "fm-1.3" or "FM1.3" into "FM-1.3". Anything else
// is returned unchanged.
func CanonicalCode(code string) string {
	c := strings.ToUpper(strings.TrimSpace(code))
	c = strings.TrimPrefix(c, "FM")
	c = strings.TrimPrefix(c, "-")
	if codePattern.MatchString(c) {
		return "FM-" + c
	}
	return code
}

var codePattern = regexp.MustCompile(`^[1-9]\.[0-9]+$`)

// Remap is the outcome of mapping a label from some source onto the taxonomy.
type Remap struct {
	Code    string // the mode's code; empty when the label cannot be mapped
	Dropped bool   // the label names a draft mode that has no successor
}

// MapLabel maps a label such as "2.2 Step repetition\n\n<description>" onto
// a code by its text. The number in front is ignored on purpose: drafts of the
// taxonomy numbered the modes differently, so only the name identifies a mode.
func (t *Taxonomy) MapLabel(label string) Remap {
	name := labelName(label)
	if code, ok := t.byAlias[name]; ok {
		return Remap{Code: code}
	}
	for _, d := range t.Dropped {
		if normalizeLabel(d) == name {
			return Remap{Dropped: true}
		}
	}
	return Remap{}
}

// labelName extracts the normalised mode name from the first line of a label,
// dropping a leading draft number such as "1.5" or "FM-2.3".
func labelName(label string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(label), "\n")
	first = leadingCode.ReplaceAllString(first, "")
	return normalizeLabel(first)
}

var leadingCode = regexp.MustCompile(`^\s*(?i:fm-?)?[0-9]+(\.[0-9]+)*[.:)]?\s*`)

// normalizeLabel lowercases a name and reduces it to letters, digits, apostrophes and single spaces.
func normalizeLabel(s string) string {
	s = strings.ToLower(s)
	s = strings.NewReplacer("’", "'", "‘", "'", "-", " ", "_", " ").Replace(s)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '\'', r == ' ':
			b.WriteRune(r)
		default:
			b.WriteRune(' ')
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
