package score

import (
	"regexp"
	"strings"
)

// MaxK is the largest k for which @k scores are computed.
const MaxK = 5

// PRF is a precision, recall and F1 triple.
type PRF struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

func prf(tp, predicted, relevant int) PRF {
	var r PRF
	if predicted > 0 {
		r.Precision = float64(tp) / float64(predicted)
	}
	if relevant > 0 {
		r.Recall = float64(min(tp, relevant)) / float64(relevant)
	}
	if r.Precision+r.Recall > 0 {
		r.F1 = 2 * r.Precision * r.Recall / (r.Precision + r.Recall)
	}
	return r
}

// Prediction is one blamed entity and what it matched.
type Prediction struct {
	Entity string `json:"entity"`
	// Group is the ground-truth group it matched ("" when none).
	Group string `json:"group,omitempty"`
	// Root says the group is a root cause or an alias of one.
	Root bool `json:"root"`
	// Duplicate marks a prediction of a group an earlier one already
	// matched (or of the same name); it is left out of the scores.
	Duplicate bool `json:"duplicate,omitempty"`
	// Dropped marks a prediction outside the namespace filter.
	Dropped bool `json:"dropped,omitempty"`
}

// EntityScore is a diagnosis scored against one incident's ground truth.
type EntityScore struct {
	PRF
	// AtK[k-1] scores the first k (deduplicated) predictions.
	AtK         [MaxK]PRF    `json:"at_k"`
	Predictions []Prediction `json:"predictions"`
	RootClasses int          `json:"root_classes"`
	// MatchedRoots lists the root classes found, in order of discovery.
	MatchedRoots []string `json:"matched_roots"`
	// Chain is the propagation-chain score, when the ground truth has propagations.
	Chain *ChainScore `json:"chain,omitempty"`
}

// ChainScore compares the fault's path with the agent's, both contracted to
// components (see Component).
type ChainScore struct {
	PRF
	GroundTruth []string `json:"ground_truth_path"`
	Model       []string `json:"model_path"`
	Common      []string `json:"common"`
}

// Options tune scoring.
type Options struct {
	Matcher
	// Namespace, when set, keeps only predictions in that namespace (or with
	// none), as the leaderboard does.
	Namespace string
}

// ScoreEntities scores predictions (entity names in answer order) and the
// agent's propagations against a ground truth.
func ScoreEntities(gt *GroundTruth, predictions []string, propagations []Propagation, opts Options) EntityScore {
	s := EntityScore{RootClasses: len(gt.RootClasses()), MatchedRoots: []string{}, Predictions: []Prediction{}}
	seenClass, seenName := map[string]bool{}, map[string]bool{}
	var scored []Prediction
	for _, raw := range predictions {
		e := ParseEntity(raw)
		p := Prediction{Entity: raw}
		if opts.Namespace != "" && e.Namespace != "" && e.Namespace != opts.Namespace {
			p.Dropped = true
			s.Predictions = append(s.Predictions, p)
			continue
		}
		groups := opts.Match(gt, e)
		if len(groups) > 0 {
			g := groups[0]
			p.Group = g.ID
			p.Root = gt.IsRootClass(gt.Class(g.ID))
		}
		key := e.String()
		switch {
		case p.Group != "" && seenClass[gt.Class(p.Group)], seenName[key]:
			p.Duplicate = true
		default:
			if p.Group != "" {
				seenClass[gt.Class(p.Group)] = true
			}
			seenName[key] = true
			scored = append(scored, p)
		}
		s.Predictions = append(s.Predictions, p)
	}
	tpAt := func(k int) (tp int, roots []string) {
		for _, p := range scored[:min(k, len(scored))] {
			if p.Root {
				tp++
				roots = append(roots, gt.Class(p.Group))
			}
		}
		return tp, roots
	}
	tp, roots := tpAt(len(scored))
	s.PRF = prf(tp, len(scored), s.RootClasses)
	if roots != nil {
		s.MatchedRoots = roots
	}
	for k := 1; k <= MaxK; k++ {
		tpk, _ := tpAt(k)
		s.AtK[k-1] = prf(tpk, min(k, len(scored)), s.RootClasses)
	}
	if len(gt.Propagations) > 0 {
		s.Chain = scoreChain(gt, propagations, opts.Matcher)
	}
	return s
}

var stemChars = regexp.MustCompile(`^[a-z0-9-]+`)

// Component names the application a group belongs to, so that a Pod, its
// Deployment and its Service count as one step of a propagation path: the
// group's name, or its first filter with the regular-expression syntax
// stripped ("load-generator-.*" and "load-generator\b" are both
// "load-generator").
func Component(g *Group) string {
	if g.Name != "" {
		return g.Name
	}
	for _, f := range g.Filter {
		f = strings.TrimPrefix(strings.TrimPrefix(f, "^"), ".*")
		if stem := strings.TrimRight(stemChars.FindString(f), "-"); stem != "" {
			return stem
		}
	}
	return g.ID
}

// scoreChain contracts both paths to components and compares them by their
// longest common subsequence. Entities of the agent's path that match no
// group stay in it as components of their own, so that claiming a wrong
// path costs precision.
func scoreChain(gt *GroundTruth, props []Propagation, m Matcher) *ChainScore {
	byID := map[string]*Group{}
	for i := range gt.Groups {
		byID[gt.Groups[i].ID] = &gt.Groups[i]
	}
	gtComp := func(id string) string {
		if g, ok := byID[id]; ok {
			return Component(g)
		}
		return id
	}
	modelComp := func(name string) string {
		if groups := m.Match(gt, ParseEntity(name)); len(groups) > 0 {
			return Component(groups[0])
		}
		return "unmatched:" + ParseEntity(name).String()
	}
	var gtPath, modelPath []string
	for _, p := range gt.Propagations {
		gtPath = appendContracted(gtPath, gtComp(p.Source), gtComp(p.Target))
	}
	for _, p := range props {
		modelPath = appendContracted(modelPath, modelComp(p.Source), modelComp(p.Target))
	}
	common := lcs(gtPath, modelPath)
	c := &ChainScore{GroundTruth: gtPath, Model: modelPath, Common: common}
	if c.Model == nil {
		c.Model = []string{}
	}
	c.PRF = prf(len(common), len(modelPath), len(gtPath))
	return c
}

// appendContracted appends components, skipping one equal to the last.
func appendContracted(path []string, comps ...string) []string {
	for _, c := range comps {
		if len(path) == 0 || path[len(path)-1] != c {
			path = append(path, c)
		}
	}
	return path
}

// lcs returns a longest common subsequence of a and b.
func lcs(a, b []string) []string {
	n, m := len(a), len(b)
	dp := make([][]int, n+1)
	for i := range dp {
		dp[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	out := []string{}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case a[i] == b[j]:
			out = append(out, a[i])
			i++
			j++
		case dp[i+1][j] >= dp[i][j+1]:
			i++
		default:
			j++
		}
	}
	return out
}
