package discover

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// signatureStats is what the traces say of one exact signature: the
// traces that have it, in the order they were read, each once, and a few
// examples of it.
type signatureStats struct {
	sig    Signature
	name   string   // sig.String()
	tokens []string // sorted
	traces []int32  // indices into the cohort's traces
	steps  []int32  // where each of traces shows it (-1: nowhere in particular)
	failed int      // how many of traces failed
	quotes []quoteAt
}

// quoteAt is a quote of a signature's step, on a trace of the cohort.
type quoteAt struct {
	trace, step int32
	text        string
}

// ClusterOptions say how near-identical signatures are merged.
type ClusterOptions struct {
	// Similarity is the least Jaccard similarity of two signatures' token
	// sets for them to be merged: 1 merges only identical token sets.
	Similarity float64
	// MaxLeaders bounds how many signatures others are compared with, so
	// that merging stays near-linear in the number of signatures.
	MaxLeaders int
}

// cluster groups signatures: each group is a leader (the signature with
// the most failed traces) and the signatures merged into it, which are of
// the same kind and key and whose token sets are at least opt.Similarity
// alike. Greedy leader clustering over the signatures in order of failed
// traces, then traces, then name: a signature joins the most similar
// leader (the first, on a tie), or leads a group of its own. Only a
// signature seen in a failed trace may lead, and at most opt.MaxLeaders do;
// a signature that can neither join nor lead is left out, as it could
// never make a pattern of failures. The groups come in the leaders' order,
// their members in the same order.
func cluster(sigs []*signatureStats, opt ClusterOptions) [][]*signatureStats {
	slices.SortFunc(sigs, func(a, b *signatureStats) int {
		return cmp.Or(cmp.Compare(b.failed, a.failed), cmp.Compare(len(b.traces), len(a.traces)), cmp.Compare(a.name, b.name))
	})
	type leader struct {
		group  int
		tokens []string
	}
	byKey := map[Signature][]leader{} // by kind and key; Template unset
	var groups [][]*signatureStats
	leaders := 0
	for _, s := range sigs {
		key := Signature{Kind: s.sig.Kind, Key: s.sig.Key}
		best, bestSim := -1, 0.0
		for _, l := range byKey[key] {
			if sim := jaccard(s.tokens, l.tokens); sim >= opt.Similarity && sim > bestSim {
				best, bestSim = l.group, sim
			}
		}
		switch {
		case best >= 0:
			groups[best] = append(groups[best], s)
		case s.failed > 0:
			if leaders < opt.MaxLeaders {
				byKey[key] = append(byKey[key], leader{group: len(groups), tokens: s.tokens})
				leaders++
			}
			groups = append(groups, []*signatureStats{s})
		}
	}
	return groups
}

// jaccard is the Jaccard similarity of two sorted sets of tokens: the
// size of their intersection over that of their union; 1 for two empty
// sets.
func jaccard(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	both := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch c := cmp.Compare(a[i], b[j]); {
		case c == 0:
			both++
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	return float64(both) / float64(len(a)+len(b)-both)
}

// signatureTokens are what near-identical signatures are compared by: the
// words of an error's or a finding's text; an ending's calls, each whole
// and counted from the last, and how it ended, so that endings merge only
// when their calls are the same (their heads already normalised) and
// never when one has a call the other lacks.
func signatureTokens(s Signature) []string {
	var tokens []string
	if s.Kind != KindEnding {
		tokens = Tokens(s.Template)
	} else {
		calls, end, _ := strings.Cut(s.Template, endingMark)
		parts := strings.Split(calls, callMark)
		for i, c := range parts {
			tokens = append(tokens, fmt.Sprintf("%d:%s", len(parts)-i, c))
		}
		tokens = append(tokens, "end:"+end)
	}
	slices.Sort(tokens)
	return tokens
}
