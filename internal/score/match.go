package score

import "strings"

// workloadKinds are interchangeable by default: ITBench's official scorer
// accepts a Deployment, its ReplicaSet, its Pods or its Service for one
// another when they belong to the same app.
var workloadKinds = map[string]bool{"pod": true, "deployment": true, "replicaset": true, "service": true, "statefulset": true, "daemonset": true}

// Matcher decides which ground-truth group an entity names.
type Matcher struct {
	// StrictKind requires the kind to agree exactly, turning off the
	// leniency across workload kinds.
	StrictKind bool
}

// Match returns the groups of gt that e matches, root-cause groups (and
// their aliases) first, in ground-truth order otherwise.
func (m Matcher) Match(gt *GroundTruth, e Entity) []*Group {
	var root, other []*Group
	for i := range gt.Groups {
		g := &gt.Groups[i]
		if !m.matches(g, e) {
			continue
		}
		if gt.IsRootClass(gt.Class(g.ID)) {
			root = append(root, g)
		} else {
			other = append(other, g)
		}
	}
	return append(root, other...)
}

func (m Matcher) matches(g *Group, e Entity) bool {
	if e.Kind != "" && g.Kind != "" && !strings.EqualFold(e.Kind, g.Kind) {
		if m.StrictKind || !workloadKinds[strings.ToLower(e.Kind)] || !workloadKinds[strings.ToLower(g.Kind)] {
			return false
		}
	}
	if e.Namespace != "" && g.Namespace != "" && e.Namespace != g.Namespace {
		return false
	}
	if g.Name != "" && e.Name == g.Name {
		return true
	}
	for _, re := range g.filters {
		if re.MatchString(e.Name) {
			return true
		}
	}
	return false
}
