// Package score judges how runs went: ITBench root-cause scoring of a trace's
// diagnosis against ground truth (entity precision, recall, F1, @k,
// propagation-chain F1), outcome labels from files, and the official
// scorer's verdicts where a run carries them.
package score

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// GroundTruth is what is known about one incident: its entity groups (some
// marked as root causes), which groups are the same thing (aliases), and how
// the fault propagated.
type GroundTruth struct {
	ID           string        `json:"id"`
	Source       string        `json:"source"` // file (and record) it came from
	Groups       []Group       `json:"groups"`
	Aliases      [][]string    `json:"aliases,omitempty"`
	Propagations []Propagation `json:"propagations,omitempty"`
	// Problems lists what could not be used, such as a name filter that
	// cannot be translated to Go's regular expressions.
	Problems []string `json:"problems,omitempty"`

	class map[string]string // group id → id of its alias class
	roots map[string]bool   // the alias classes that hold a root cause
	// unusable lists the filters left out, for LoadFiles to report each
	// once over every incident.
	unusable []unusableFilter
}

// unusableFilter is a name filter that is no usable regular expression,
// with the groups that have it.
type unusableFilter struct {
	filter, why string
	groups      []string
}

// Group is a set of Kubernetes entities: a kind in a namespace whose name is
// Name or matches one of Filter (Python regular expressions, search semantics).
type Group struct {
	ID        string   `json:"id"`
	Kind      string   `json:"kind"`
	Namespace string   `json:"namespace,omitempty"`
	Name      string   `json:"name,omitempty"`
	Filter    []string `json:"filter,omitempty"`
	RootCause bool     `json:"root_cause,omitempty"`

	filters []*regexp.Regexp
}

// Propagation is one edge of the fault's path between groups.
type Propagation struct {
	Source    string `json:"source"`
	Target    string `json:"target"`
	Condition string `json:"condition,omitempty"`
	Effect    string `json:"effect,omitempty"`
}

// v1 is ITBench's rich ground-truth format, also each record of the
// consolidated ground_truths.json.
type v1 struct {
	ID           json.RawMessage `json:"id"` // a string or a number
	Groups       []Group         `json:"groups"`
	Aliases      [][]string      `json:"aliases"`
	Propagations []Propagation   `json:"propagations"`
}

// v2 is the itbench.io/v2 GroundTruth: the root-cause entities only.
type v2 struct {
	Entities []struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	} `json:"entities"`
}

// IsGroundTruth reports whether data looks like a ground-truth document in
// one of the supported formats: checked by content, not by file name.
func IsGroundTruth(data []byte) bool {
	docs, err := decodeDocument(data)
	if err != nil {
		return false
	}
	for _, d := range docs {
		if _, ok := d["groups"]; ok {
			return true
		}
		if spec, ok := d["spec"].(map[string]any); ok {
			if _, ok := spec["groups"]; ok {
				return true
			}
			if _, ok := spec["entities"]; ok && d["kind"] == "GroundTruth" {
				return true
			}
		}
	}
	return false
}

// decodeDocument reads JSON or YAML into generic objects: a list of records
// or a single one.
func decodeDocument(data []byte) ([]map[string]any, error) {
	var v any
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		if err := json.Unmarshal(trimmed, &v); err != nil {
			return nil, err
		}
	} else if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case map[string]any:
		return []map[string]any{x}, nil
	case []any:
		var out []map[string]any
		for _, e := range x {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("a list of ground truths must hold objects")
			}
			out = append(out, m)
		}
		return out, nil
	}
	return nil, fmt.Errorf("not a ground-truth document")
}

// Load reads the ground truths in a file: the consolidated list, one v1
// document (flat or wrapped in spec) or one v2 document. Documents without
// an id take defaultID (usually derived from the path).
func Load(path, defaultID string) ([]*GroundTruth, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseGroundTruth(data, path, defaultID)
}

func parseGroundTruth(data []byte, path, defaultID string) ([]*GroundTruth, error) {
	docs, err := decodeDocument(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []*GroundTruth
	for i, d := range docs {
		where := path
		if len(docs) > 1 {
			where = fmt.Sprintf("%s#%d", path, i)
		}
		gt, err := fromDocument(d, where, defaultID)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		out = append(out, gt)
	}
	return out, nil
}

func fromDocument(d map[string]any, where, defaultID string) (*GroundTruth, error) {
	body := d
	if spec, ok := d["spec"].(map[string]any); ok {
		body = spec
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	gt := &GroundTruth{Source: where}
	if _, ok := body["groups"]; ok {
		var doc v1
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("bad v1 ground truth: %w", err)
		}
		gt.ID = idText(doc.ID)
		gt.Groups, gt.Aliases, gt.Propagations = doc.Groups, doc.Aliases, doc.Propagations
	} else if _, ok := body["entities"]; ok {
		var doc v2
		if err := json.Unmarshal(raw, &doc); err != nil {
			return nil, fmt.Errorf("bad v2 ground truth: %w", err)
		}
		for i, e := range doc.Entities {
			gt.Groups = append(gt.Groups, Group{ID: fmt.Sprintf("entity-%d", i+1), Kind: e.Kind, Namespace: e.Metadata.Namespace, Name: e.Metadata.Name, RootCause: true})
		}
	} else {
		return nil, fmt.Errorf("neither groups nor entities found")
	}
	if gt.ID == "" {
		gt.ID = defaultID
		if meta, ok := d["metadata"].(map[string]any); ok && gt.ID == "" {
			if name, ok := meta["name"].(string); ok {
				gt.ID = ScenarioID(name)
			}
		}
	}
	if gt.ID == "" {
		return nil, fmt.Errorf("no incident id: give the file a scenario directory or use --scenario")
	}
	gt.prepare()
	return gt, nil
}

func idText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

// prepare compiles the filters and builds the alias classes.
func (gt *GroundTruth) prepare() {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if p, ok := parent[x]; ok && p != x {
			root := find(p)
			parent[x] = root
			return root
		}
		return x
	}
	for i := range gt.Groups {
		g := &gt.Groups[i]
		parent[g.ID] = g.ID
		for _, f := range g.Filter {
			re, err := PythonRegexp(f)
			if err != nil {
				gt.unusable = addUnusable(gt.unusable, f, err.Error(), gt.ID+"/"+g.ID)
				continue
			}
			g.filters = append(g.filters, re)
		}
	}
	gt.Problems = append(gt.Problems, unusableProblems(gt.unusable)...)
	for _, alias := range gt.Aliases {
		for _, id := range alias[min(1, len(alias)):] {
			a, b := find(alias[0]), find(id)
			if a != b {
				// Keep the smaller id as the representative, so classes are stable.
				if b < a {
					a, b = b, a
				}
				parent[b] = a
			}
		}
	}
	gt.class = map[string]string{}
	for id := range parent {
		gt.class[id] = find(id)
	}
	gt.roots = map[string]bool{}
	for _, g := range gt.Groups {
		if g.RootCause {
			gt.roots[gt.Class(g.ID)] = true
		}
	}
}

// IsRootClass says whether an alias class holds a root-cause group.
func (gt *GroundTruth) IsRootClass(class string) bool { return gt.roots[class] }

// Class returns the alias class a group belongs to.
func (gt *GroundTruth) Class(groupID string) string {
	if c, ok := gt.class[groupID]; ok {
		return c
	}
	return groupID
}

// RootClasses lists the alias classes that hold a root-cause group, sorted.
func (gt *GroundTruth) RootClasses() []string {
	out := make([]string, 0, len(gt.roots))
	for c := range gt.roots {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

var scenarioPattern = regexp.MustCompile(`(?i)^(?:scenario|incident)[-_ ]?([0-9]+)$`)

// ScenarioID normalises Scenario-2, scenario_2, incident_2 and 2 to "2".
func ScenarioID(s string) string {
	s = strings.TrimSpace(s)
	if m := scenarioPattern.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return s
}

// Set is ground truth by incident id.
type Set map[string]*GroundTruth

// LoadPath reads ground truth from a file or, recursively, from every file
// under a directory whose content is a ground-truth document.
func LoadPath(path, scenarioFlag string) (Set, []string, error) {
	files, err := Files(path)
	if err != nil {
		return nil, nil, err
	}
	set, problems, err := LoadFiles(files, scenarioFlag)
	if err == nil && len(set) == 0 {
		err = fmt.Errorf("%s: no ground truth found", path)
	}
	return set, problems, err
}

// Files lists the ground-truth files at path: the file itself, or every
// file under the directory whose content is a ground-truth document.
func Files(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != path && strings.HasPrefix(d.Name(), ".") {
			return fs.SkipDir
		}
		if d.Type().IsRegular() && LooksLikeGroundTruthFile(p) {
			files = append(files, p)
		}
		return nil
	})
	return files, err
}

// LoadFiles reads ground-truth files. A document without an id takes it
// from its directory (scenario_2/, Scenario-2/) or from scenarioFlag. Where
// one incident has both a v1 and a v2 document, the richer v1 wins.
func LoadFiles(files []string, scenarioFlag string) (Set, []string, error) {
	set := Set{}
	// Each incident's problems are its unusable filters, reported here once
	// per filter over every incident.
	var unusable []unusableFilter
	sort.Strings(files)
	for _, file := range files {
		id := scenarioFlag
		if id == "" {
			id = scenarioFromDir(file)
		}
		gts, err := Load(file, id)
		if err != nil {
			return nil, nil, err
		}
		for _, gt := range gts {
			for _, u := range gt.unusable {
				for _, g := range u.groups {
					unusable = addUnusable(unusable, u.filter, u.why, g)
				}
			}
			if prev, ok := set[gt.ID]; ok && richness(prev) > richness(gt) {
				continue
			}
			set[gt.ID] = gt
		}
	}
	return set, unusableProblems(unusable), nil
}

// addUnusable notes that group has the unusable filter f.
func addUnusable(list []unusableFilter, f, why, group string) []unusableFilter {
	for i := range list {
		if list[i].filter == f {
			list[i].groups = append(list[i].groups, group)
			return list
		}
	}
	return append(list, unusableFilter{filter: f, why: why, groups: []string{group}})
}

// unusableProblems says, once per filter, which groups lose it.
func unusableProblems(list []unusableFilter) []string {
	var out []string
	for _, u := range list {
		out = append(out, fmt.Sprintf("filter %q is not usable (%s): left out of %d groups (incident/group), which match by their names and other filters: %s",
			u.filter, u.why, len(u.groups), strings.Join(u.groups, ", ")))
	}
	return out
}

func richness(gt *GroundTruth) int { return len(gt.Groups) + len(gt.Aliases) + len(gt.Propagations) }

// LooksLikeGroundTruthFile reads small files and checks whether their
// content is a ground-truth document; large files are traces, not ground truth.
func LooksLikeGroundTruthFile(path string) bool {
	info, err := os.Stat(path)
	if err != nil || info.Size() > 16<<20 {
		return false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	return IsGroundTruth(data)
}

// scenarioFromDir finds a scenario id in the directories of a path.
func scenarioFromDir(path string) string {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if m := scenarioPattern.FindStringSubmatch(filepath.Base(dir)); m != nil {
			return m[1]
		}
		if filepath.Dir(dir) == dir || filepath.Base(dir) == ".." {
			return ""
		}
	}
}

// besideNames are the file names ground truth is kept under beside runs:
// the consolidated file and ITBench's per-scenario documents.
var besideNames = []string{"ground_truths.json", "ground_truth.json", "groundtruth.json", "groundtruth_v1.yaml", "groundtruth.yaml", "ground_truth.yaml", "ground_truth.yml"}

// Beside finds the ground truth that lies beside a run: in the directory
// of its trace file or one of that directory's ancestors. A cohort that
// ships its own ground truth (a simulated one whose made-up incidents
// reuse real incident ids, or runs of an older benchmark release whose
// ground truth has since changed) is graded by that file alone. Lookups
// are cached per directory.
type Beside struct {
	dirs map[string]string // directory → ground-truth file found there or above ("" for none)
}

// NewBeside returns an empty finder.
func NewBeside() *Beside { return &Beside{dirs: map[string]string{}} }

// Of returns the absolute path of the ground-truth file nearest above the
// trace file at path, or "" when there is none (or path is not a file on
// this machine).
func (b *Beside) Of(path string) string {
	if path == "" || path == "-" {
		return ""
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	return b.dir(filepath.Dir(abs))
}

func (b *Beside) dir(dir string) string {
	if found, ok := b.dirs[dir]; ok {
		return found
	}
	found := ""
	for _, name := range besideNames {
		if p := filepath.Join(dir, name); LooksLikeGroundTruthFile(p) {
			found = p
			break
		}
	}
	if parent := filepath.Dir(dir); found == "" && parent != dir {
		found = b.dir(parent)
	}
	b.dirs[dir] = found
	return found
}
